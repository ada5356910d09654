//! Key spaces: for every key byte, the set of values it may take.
//!
//! Keys are numbered in lexicographic order of their bytes (byte 0 is the
//! most significant digit of a mixed-radix number whose digits are the
//! positions in each byte's sorted candidate list), so index ranges split the
//! space evenly and a position can be resumed from.

use crate::aes::KeySize;
use crate::error::{Error, Result};
use core::fmt;
use core::ops::Range;

/// The largest key space a search accepts: 2^60 keys (about 36 years at a
/// billion keys per second).
pub const MAX_KEYS: u64 = 1 << 60;

/// The candidate values of one key byte: a non-empty set.
///
/// ```
/// use hwcrypt::crack::{ByteSet, KeySpace};
/// let mut bytes = vec![ByteSet::range(0, 15)?, ByteSet::list(&[1, 5, 9])?];
/// bytes.extend(std::iter::repeat_n(ByteSet::fixed(0), 14));
/// let space = KeySpace::new(bytes)?;
/// assert_eq!(space.size(), 16 * 3);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ByteSet {
    /// Sorted, without duplicates, never empty.
    values: Vec<u8>,
}

impl ByteSet {
    /// Exactly one value.
    pub fn fixed(value: u8) -> ByteSet {
        ByteSet {
            values: vec![value],
        }
    }

    /// Every value in `first..=last`.
    pub fn range(first: u8, last: u8) -> Result<ByteSet> {
        if first > last {
            return Err(Error::InvalidKeySpace(format!(
                "empty range {first}..={last}"
            )));
        }
        Ok(ByteSet {
            values: (first..=last).collect(),
        })
    }

    /// Any of 0..=255.
    pub fn any() -> ByteSet {
        ByteSet {
            values: (0..=255).collect(),
        }
    }

    /// The given values (sorted and deduplicated); an error if empty.
    pub fn list(values: &[u8]) -> Result<ByteSet> {
        let mut values = values.to_vec();
        values.sort_unstable();
        values.dedup();
        if values.is_empty() {
            return Err(Error::InvalidKeySpace("empty value list".into()));
        }
        Ok(ByteSet { values })
    }

    /// The candidate values, ascending.
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// How many values (1..=256).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Never true (a `ByteSet` has at least one value); for clippy's sake.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl fmt::Debug for ByteSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ByteSet({} values)", self.values.len())
    }
}

/// A set of candidate AES keys: one [`ByteSet`] per key byte.
///
/// ```
/// use hwcrypt::crack::KeySpace;
/// let space = KeySpace::parse("0..=16*6, 0*26")?; // AES-256, six bytes in 0..=16
/// assert_eq!(space.size(), 17u64.pow(6));
/// let mut key = [0u8; 32];
/// space.key_at(1, &mut key); // keys are numbered with byte 0 most significant
/// assert_eq!(key[5], 1);
/// assert_eq!(space.index_of(&key), Some(1));
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct KeySpace {
    bytes: Vec<ByteSet>,
    size: u64,
}

impl fmt::Debug for KeySpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KeySpace({} bytes, {} keys)",
            self.bytes.len(),
            self.size
        )
    }
}

impl KeySpace {
    /// A key space from one set per key byte (16, 24 or 32 of them); an
    /// error if it holds more than [`MAX_KEYS`] keys.
    pub fn new(bytes: Vec<ByteSet>) -> Result<KeySpace> {
        KeySize::from_key_len(bytes.len()).map_err(|_| {
            Error::InvalidKeySpace(format!(
                "{} key bytes described; AES keys have 16, 24 or 32",
                bytes.len()
            ))
        })?;
        let mut size: u128 = 1;
        for b in &bytes {
            size = size.saturating_mul(b.len() as u128);
        }
        if size > u128::from(MAX_KEYS) {
            let log2 = bytes.iter().map(|b| (b.len() as f64).log2()).sum::<f64>();
            let years = 2f64.powf(log2) / 1e9 / 3.156e7;
            return Err(Error::InvalidKeySpace(format!(
                "2^{log2:.1} keys is too many to search (limit 2^60; about {years:.1e} years at 10^9 keys/s); fix more bytes or narrow their ranges"
            )));
        }
        Ok(KeySpace {
            bytes,
            size: size as u64,
        })
    }

    /// Parses the command-line syntax: comma- or space-separated items, each
    /// a byte set with an optional repeat count `*N` (spaces around the `*`
    /// allowed). A byte set is
    ///
    /// * a number, decimal or `0x` hex (`0`, `255`, `0x1f`): a fixed byte;
    /// * a range `A..=B`, `A..B` (B excluded, up to 256) or `A-B` (inclusive);
    /// * `?` or `any`: all 256 values;
    /// * a list in braces of numbers and ranges: `{1,5,0x10..=0x1f}`;
    ///
    /// and `hex:0011aabb...` stands for that many fixed bytes. Example:
    /// `0..=16*6, 0*26` (the first 6 bytes in 0..=16, 26 zero bytes).
    pub fn parse(spec: &str) -> Result<KeySpace> {
        let mut bytes = Vec::new();
        for item in split_items(spec)? {
            if let Some(hex) = item.strip_prefix("hex:") {
                let fixed = parse_hex(hex).map_err(Error::InvalidKeySpace)?;
                bytes.extend(fixed.into_iter().map(ByteSet::fixed));
                continue;
            }
            let (set, count) = match item.rsplit_once('*') {
                Some((set, n)) => {
                    let n: usize = n.trim().parse().map_err(|_| {
                        Error::InvalidKeySpace(format!("bad repeat count in {item:?}"))
                    })?;
                    if n == 0 || n > 32 {
                        return Err(Error::InvalidKeySpace(format!(
                            "repeat count {n} in {item:?} is not in 1..=32"
                        )));
                    }
                    (set.trim(), n)
                }
                None => (item.as_str(), 1),
            };
            let set = parse_set(set)?;
            if bytes.len() + count > 32 {
                return Err(Error::InvalidKeySpace(
                    "more than 32 key bytes described".into(),
                ));
            }
            bytes.extend(core::iter::repeat_n(set, count));
        }
        KeySpace::new(bytes)
    }

    /// AES-128, -192 or -256.
    pub fn key_size(&self) -> KeySize {
        KeySize::from_key_len(self.bytes.len()).expect("checked in new")
    }

    /// Key length in bytes.
    pub fn key_len(&self) -> usize {
        self.bytes.len()
    }

    /// The number of keys.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// log2 of the number of keys.
    pub fn bits(&self) -> f64 {
        (self.size as f64).log2()
    }

    /// The candidate set of every key byte.
    pub fn byte_sets(&self) -> &[ByteSet] {
        &self.bytes
    }

    /// The key with number `index` (`< size`), written to `out[..key_len]`.
    pub fn key_at(&self, index: u64, out: &mut [u8]) {
        let mut rest = index;
        for (o, set) in out[..self.bytes.len()].iter_mut().zip(&self.bytes).rev() {
            let n = set.len() as u64;
            *o = set.values[(rest % n) as usize];
            rest /= n;
        }
    }

    /// The number of `key`, if the space contains it.
    pub fn index_of(&self, key: &[u8]) -> Option<u64> {
        if key.len() != self.bytes.len() {
            return None;
        }
        let mut index = 0u64;
        for (b, set) in key.iter().zip(&self.bytes) {
            let digit = set.values.binary_search(b).ok()?;
            index = index * set.len() as u64 + digit as u64;
        }
        Some(index)
    }

    /// The index range of shard `i` of `n` (0-based): the slices are
    /// contiguous, cover the space exactly once, and differ in size by at
    /// most one key.
    pub fn shard(&self, i: u64, n: u64) -> Result<Range<u64>> {
        if n == 0 || i >= n {
            return Err(Error::InvalidSearch(format!(
                "shard {i}/{n}: need 0 <= i < n"
            )));
        }
        let at = |k: u64| ((u128::from(self.size) * u128::from(k)) / u128::from(n)) as u64;
        Ok(at(i)..at(i + 1))
    }
}

fn split_items(spec: &str) -> Result<Vec<String>> {
    // White space around a repeat's `*` belongs to the item (`0 * 15`),
    // not between two items.
    let mut joined = String::with_capacity(spec.len());
    for c in spec.chars() {
        if c == '*' {
            joined.truncate(joined.trim_end().len());
        }
        if c.is_whitespace() && joined.ends_with('*') {
            continue;
        }
        joined.push(c);
    }
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in joined.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                if depth == 0 {
                    return Err(Error::InvalidKeySpace("unbalanced '}'".into()));
                }
                depth -= 1;
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' | ';' if depth == 0 => {
                if !cur.trim().is_empty() {
                    items.push(cur.trim().to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if depth != 0 {
        return Err(Error::InvalidKeySpace("unbalanced '{'".into()));
    }
    if !cur.trim().is_empty() {
        items.push(cur.trim().to_string());
    }
    if items.is_empty() {
        return Err(Error::InvalidKeySpace("empty description".into()));
    }
    Ok(items)
}

fn parse_hex(hex: &str) -> core::result::Result<Vec<u8>, String> {
    let hex: String = hex.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if !hex.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits in {hex:?}"));
    }
    // Byte pairs, not string slices: a multi-byte character must be an
    // error, not a slice through it.
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            core::str::from_utf8(pair)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| format!("bad hex digits in {hex:?}"))
        })
        .collect()
}

fn parse_byte(s: &str) -> Result<u8> {
    let s = s.trim();
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u16::from_str_radix(h, 16)
    } else {
        s.parse::<u16>()
    };
    match v {
        Ok(v) if v <= 255 => Ok(v as u8),
        _ => Err(Error::InvalidKeySpace(format!(
            "{s:?} is not a byte value (0..=255, decimal or 0x hex)"
        ))),
    }
}

/// A number or a range, appended to `out`.
fn parse_atom(s: &str, out: &mut Vec<u8>) -> Result<()> {
    let s = s.trim();
    if s == "?" || s.eq_ignore_ascii_case("any") {
        out.extend(0..=255);
    } else if let Some((a, b)) = s.split_once("..=") {
        out.extend(ByteSet::range(parse_byte(a)?, parse_byte(b)?)?.values);
    } else if let Some((a, b)) = s.split_once("..") {
        // The excluded end may be 256 (`0..256` is every byte).
        let a = u16::from(parse_byte(a)?);
        let b = match b.trim() {
            "256" | "0x100" | "0X100" => 256,
            b => u16::from(parse_byte(b)?),
        };
        if b <= a {
            return Err(Error::InvalidKeySpace(format!("empty range {s:?}")));
        }
        out.extend((a..b).map(|v| v as u8));
    } else if let Some((a, b)) = s.split_once('-').filter(|(a, _)| !a.is_empty()) {
        out.extend(ByteSet::range(parse_byte(a)?, parse_byte(b)?)?.values);
    } else {
        out.push(parse_byte(s)?);
    }
    Ok(())
}

fn parse_set(s: &str) -> Result<ByteSet> {
    let mut values = Vec::new();
    if let Some(inner) = s.strip_prefix('{') {
        let inner = inner
            .strip_suffix('}')
            .ok_or_else(|| Error::InvalidKeySpace(format!("{s:?}: a list must end with '}}'")))?;
        for atom in inner.split(',') {
            parse_atom(atom, &mut values)?;
        }
    } else {
        parse_atom(s, &mut values)?;
    }
    ByteSet::list(&values)
}

/// Enumerates keys from an index on, writing each into a 32-byte template
/// (bytes past the key length stay zero). Only the bytes with more than one
/// candidate are digits; the least significant one changes every step.
#[derive(Clone)]
pub(crate) struct Odometer<'a> {
    space: &'a KeySpace,
    /// Positions (key byte indices) of the variable bytes, least significant first.
    positions: Vec<usize>,
    /// Current digit of each variable byte, same order.
    digits: Vec<usize>,
    /// The lowest digit's values, shifted into place in their 16-byte half.
    low_lut: Vec<u128>,
    pub(crate) key: [u8; 32],
}

impl<'a> Odometer<'a> {
    pub(crate) fn new(space: &'a KeySpace, index: u64) -> Odometer<'a> {
        let mut key = [0u8; 32];
        space.key_at(index.min(space.size.saturating_sub(1)), &mut key);
        let positions: Vec<usize> = (0..space.bytes.len())
            .rev()
            .filter(|&p| space.bytes[p].len() > 1)
            .collect();
        let digits = positions
            .iter()
            .map(|&p| {
                space.bytes[p]
                    .values
                    .binary_search(&key[p])
                    .expect("key_at writes candidate values")
            })
            .collect();
        let low_lut = positions
            .first()
            .map(|&p| {
                space.bytes[p]
                    .values
                    .iter()
                    .map(|&v| u128::from(v) << (8 * (p % 16)))
                    .collect()
            })
            .unwrap_or_default();
        Odometer {
            space,
            positions,
            digits,
            low_lut,
            key,
        }
    }

    /// Steps to the next key (wrapping to the first after the last).
    #[cfg(test)]
    pub(crate) fn step(&mut self) {
        if let (Some(d), Some(&p)) = (self.digits.first_mut(), self.positions.first()) {
            let values = &self.space.bytes[p].values;
            if *d + 1 < values.len() {
                *d += 1;
                self.key[p] = values[*d];
                return;
            }
        }
        self.carry();
    }

    /// The general step: the lowest digit wraps and carries.
    #[cold]
    fn carry(&mut self) {
        for (d, &p) in self.digits.iter_mut().zip(&self.positions) {
            let values = &self.space.bytes[p].values;
            *d += 1;
            if *d < values.len() {
                self.key[p] = values[*d];
                return;
            }
            *d = 0;
            self.key[p] = values[0];
        }
    }

    /// Writes the next `n` keys into slots `0..n` of `batch`, stepping past them.
    #[inline]
    pub(crate) fn fill(&mut self, batch: &mut super::kernel::KeyBatch, n: usize) {
        let Some(&p) = self.positions.first() else {
            for slot in 0..n {
                batch.set(slot, &self.key);
            }
            return;
        };
        let values = &self.space.bytes[p].values[..];
        // The lowest digit's byte is ORed into its half of the key as an
        // integer (from a table: no variable 128-bit shift per key): writing
        // it into `self.key` and reloading 16 bytes would stall on store
        // forwarding (a byte store under a wider load) every key.
        let half = p / 16;
        // Taken out for the loop (`carry` borrows `self` mutably).
        let lut = core::mem::take(&mut self.low_lut);
        let mut slot = 0;
        while slot < n {
            // Run the lowest digit up to its end (or the batch end) without carries.
            let d = self.digits[0];
            let run = (values.len() - d).min(n - slot);
            self.key[p] = 0;
            let base = [
                u128::from_le_bytes(self.key[..16].try_into().expect("16 bytes")),
                u128::from_le_bytes(self.key[16..].try_into().expect("16 bytes")),
            ];
            let values_run = &lut[d..d + run];
            // The half without the digit is the same for the whole run, and
            // usually for many batches: it is written to every slot once
            // and then left alone (`same_hi`/`same_lo` remember it).
            if half == 0 {
                if batch.same_hi != Some(base[1]) {
                    // Slots before `slot` hold earlier keys of this batch.
                    batch.hi[slot..].fill(base[1].to_le_bytes());
                    batch.same_hi = (slot == 0).then_some(base[1]);
                }
                batch.same_lo = None;
                for (l, &v) in batch.lo[slot..slot + run].iter_mut().zip(values_run) {
                    *l = (base[0] | v).to_le_bytes();
                }
            } else {
                if batch.same_lo != Some(base[0]) {
                    batch.lo[slot..].fill(base[0].to_le_bytes());
                    batch.same_lo = (slot == 0).then_some(base[0]);
                }
                batch.same_hi = None;
                for (h, &v) in batch.hi[slot..slot + run].iter_mut().zip(values_run) {
                    *h = (base[1] | v).to_le_bytes();
                }
            }
            slot += run;
            if d + run < values.len() {
                self.digits[0] = d + run;
                self.key[p] = values[d + run];
            } else {
                self.digits[0] = values.len() - 1;
                self.key[p] = values[values.len() - 1];
                self.carry();
            }
        }
        self.low_lut = lut;
    }
}

impl Drop for Odometer<'_> {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.key.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found in review (2026-11-29): `0 *15` was refused ("" is not a
    /// byte value) and `A..256` could not name the top of the byte range.
    #[test]
    fn spaces_around_a_repeat_and_an_excluded_end_of_256() {
        let spaced = KeySpace::parse("0 *15, 1").unwrap();
        for other in ["0* 15, 1", "0 * 15 ,1", "0*15, 1"] {
            assert_eq!(KeySpace::parse(other).unwrap(), spaced, "{other}");
        }
        let all = KeySpace::parse("0..256, 0*15").unwrap();
        assert_eq!(all, KeySpace::parse("?, 0*15").unwrap());
        assert_eq!(
            KeySpace::parse("250..0x100, 0*15").unwrap(),
            KeySpace::parse("250..=255, 0*15").unwrap()
        );
        for bad in [
            "0..=256, 0*15",
            "256, 0*15",
            "256..256, 0*15",
            "0..257, 0*15",
        ] {
            assert!(KeySpace::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_the_issue_example() {
        let ks = KeySpace::parse("0..=16*6, 0*26").unwrap();
        assert_eq!(ks.size(), 17u64.pow(6));
        assert_eq!(ks.key_size(), KeySize::Aes256);
        let mut k = [0u8; 32];
        ks.key_at(ks.size() - 1, &mut k);
        assert_eq!(&k[..6], &[16; 6]);
        assert_eq!(&k[6..], &[0; 26]);
        assert_eq!(ks.index_of(&k), Some(ks.size() - 1));
    }

    #[test]
    fn non_ascii_hex_is_an_error_not_a_panic() {
        // Found by fuzz/crack_keyspace: slicing "ё" (2 bytes) at byte 1.
        for bad in ["hex:\u{451}\u{451}", "hex:0\u{451}0", "hex:\u{1F600}"] {
            assert!(
                matches!(KeySpace::parse(bad), Err(Error::InvalidKeySpace(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn syntax_variants() {
        let ks = KeySpace::parse("{1,3,0x10-0x11}, ?, hex:00112233445566778899aabbccdd").unwrap();
        assert_eq!(ks.key_size(), KeySize::Aes128);
        assert_eq!(ks.size(), 4 * 256);
        assert_eq!(ks.byte_sets()[0].values(), &[1, 3, 16, 17]);
        assert_eq!(ks.byte_sets()[15].values(), &[0xdd]);
        let ks = KeySpace::parse("0..4 5 any 0*21").unwrap();
        assert_eq!(ks.size(), 4 * 256);
        for bad in [
            "", "0*15", "0*33", "256*16", "{1,2*16", "5..=1*16", "x*16", "?*16", "hex:0",
        ] {
            let e = KeySpace::parse(bad).unwrap_err();
            assert!(matches!(e, Error::InvalidKeySpace(_)), "{bad}: {e}");
        }
        let e = KeySpace::parse("?*8,0*8").unwrap_err().to_string();
        assert!(e.contains("2^64.0"), "{e}");
    }

    #[test]
    fn odometer_follows_key_at() {
        let ks = KeySpace::parse("{1,7}, 0*13, 0..3, {9,200,4}").unwrap();
        let mut odo = Odometer::new(&ks, 0);
        for i in 0..ks.size() {
            let mut k = [0u8; 32];
            ks.key_at(i, &mut k);
            assert_eq!(odo.key, k, "index {i}");
            assert_eq!(ks.index_of(&k[..16]), Some(i));
            odo.step();
        }
        let odo = Odometer::new(&ks, 7);
        let mut k = [0u8; 32];
        ks.key_at(7, &mut k);
        assert_eq!(odo.key, k);
    }

    #[test]
    fn fill_follows_key_at() {
        for spec in [
            "{1,7}, 0*13, 0..3, {9,200,4}",
            "0*16",
            "?, 5*15",
            "0..=16*2, 0*14",
        ] {
            let ks = KeySpace::parse(spec).unwrap();
            for start in [0, 1, 5, ks.size() / 2] {
                let mut odo = Odometer::new(&ks, start);
                let mut batch = crate::crack::kernel::KeyBatch::new();
                let mut i = start;
                for n in [7usize, 64, 3, 1, 33, 64, 64, 20] {
                    odo.fill(&mut batch, n);
                    for slot in 0..n {
                        let mut k = [0u8; 32];
                        ks.key_at((i + slot as u64) % ks.size(), &mut k);
                        assert_eq!(
                            batch.key(slot, ks.key_len()),
                            k,
                            "{spec} start {start} slot {slot}"
                        );
                    }
                    i += n as u64;
                }
            }
        }
    }

    #[test]
    fn shards_partition() {
        let ks = KeySpace::parse("0..=16*3, 0*13").unwrap();
        for n in [1, 2, 3, 7, 4913, 5000] {
            let mut next = 0;
            for i in 0..n {
                let r = ks.shard(i, n).unwrap();
                assert_eq!(r.start, next);
                assert!(r.end - r.start <= ks.size() / n + 1);
                next = r.end;
            }
            assert_eq!(next, ks.size());
        }
        assert!(ks.shard(3, 3).is_err() && ks.shard(0, 0).is_err());
    }
}
