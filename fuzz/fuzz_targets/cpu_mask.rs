//! The `HWCRYPT_CPU` mask parser on arbitrary text: never a panic; a mask
//! that parses only removes features, and applying it twice changes nothing.
#![no_main]

use hwcrypt::cpu::{Mask, detected};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(mask) = Mask::parse(text) else {
        return;
    };
    let d = detected();
    let once = mask.apply(d);
    assert_eq!(mask.apply(once), once, "{text:?}: applying twice differs");
    for f in once.iter() {
        assert!(d.iter().any(|g| g == f), "{text:?}: {f:?} switched on");
    }
    for f in mask.removed().iter() {
        assert!(once.iter().all(|g| g != f), "{text:?}: {f:?} not removed");
    }
    // The mask written out again parses to the same features.
    let written: Vec<String> = mask
        .removed()
        .iter()
        .map(|f| format!("-{}", f.name()))
        .collect();
    let again = Mask::parse(&written.join(",")).expect("a written mask parses");
    assert_eq!(
        again.apply(d),
        once,
        "{text:?}: written as {written:?} differs"
    );
});
