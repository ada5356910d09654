//! The `hwcrypt crack` key-space syntax on arbitrary text: never a panic; a
//! space that parses has 16, 24 or 32 byte sets and at least one key, and
//! `key_at` / `index_of` / `shard` agree with each other.
#![no_main]

use hwcrypt::crack::KeySpace;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    spec: &'a str,
    index: u64,
    shard: u64,
    shards: u64,
}

fuzz_target!(|input: Input| {
    let Ok(space) = KeySpace::parse(input.spec) else {
        return;
    };
    assert!(matches!(space.key_len(), 16 | 24 | 32));
    assert_eq!(space.byte_sets().len(), space.key_len());
    let size = space.size();
    assert!(size >= 1, "{:?}: empty key space", input.spec);
    let i = input.index % size;
    let mut key = vec![0u8; space.key_len()];
    space.key_at(i, &mut key);
    for (b, set) in key.iter().zip(space.byte_sets()) {
        assert!(
            set.values().contains(b),
            "{:?}: key_at({i}) out of its set",
            input.spec
        );
    }
    assert_eq!(
        space.index_of(&key),
        Some(i),
        "{:?}: index_of(key_at({i}))",
        input.spec
    );
    let n = input.shards % 1000 + 1;
    let s = input.shard % n;
    let r = space.shard(s, n).expect("valid shard");
    assert!(
        r.start <= r.end && r.end <= size,
        "{:?}: shard {s}/{n} = {r:?}",
        input.spec
    );
    if s + 1 == n {
        assert_eq!(r.end, size);
    }
    assert!(space.shard(n, n).is_err());
});
