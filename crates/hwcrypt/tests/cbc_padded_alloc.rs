//! `Cbc::encrypt_padded` makes its one buffer at the padded size: it never
//! grows it, so no reallocation frees an unwiped copy of the plaintext.
//! A counting global allocator sees every `realloc` of this test binary
//! (one test only, so no other test allocates at the same time).

use hwcrypt::aes::Aes;
use hwcrypt::modes::Cbc;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static REALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn encrypt_padded_never_reallocates_the_plaintext() {
    let aes = Aes::new(&[4; 16]).unwrap();
    let plaintext = [0x61u8; 200];
    for len in [0, 1, 15, 16, 17, 100, 200] {
        let mut cbc = Cbc::new(&aes, &[0; 16]).unwrap();
        let before = REALLOCS.load(Ordering::SeqCst);
        let ct = cbc.encrypt_padded(&plaintext[..len]);
        let after = REALLOCS.load(Ordering::SeqCst);
        assert_eq!(after, before, "{len} bytes: the buffer was reallocated");
        assert_eq!(ct.len(), (len / 16 + 1) * 16);
        let mut cbc = Cbc::new(&aes, &[0; 16]).unwrap();
        assert_eq!(cbc.decrypt_padded(&ct).unwrap(), &plaintext[..len]);
    }
}
