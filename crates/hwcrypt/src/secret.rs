//! Where expanded keys live: [`SecretBox`], a heap home in which a key
//! schedule is built in place and wiped on drop.
//!
//! Why the heap: a key object returned by value is moved through every
//! constructor layer and again by the caller, and each move leaves an
//! unwiped copy of its bytes in a dead stack frame (measured: the whole
//! schedule, and the raw key, after `Aes::new` on every backend). With the
//! schedule in a `SecretBox` a move copies one pointer; the schedule is
//! expanded where it stays (zeroed memory, then `rekey`-style expansion
//! through `&mut`) and is never moved. A heap schedule also cannot alias
//! the caller's stack buffers modulo 4 KiB (the store-to-load aliasing that
//! cost up to ~30% at 256-512 B with round keys on the stack).
//!
//! The wipe on drop zeroes the whole schedule with 16- or 32-byte stores
//! followed by an empty `asm!` block that takes the pointer and may read
//! memory: the compiler must assume the zeroes are observed, so it cannot
//! drop them as dead stores before the deallocation (the `explicit_bzero` /
//! `barrier_data` idiom). That is cheaper than `zeroize`'s byte-wise volatile
//! stores (~1 KiB of single-byte stores dominated key setup) and wipes
//! padding too.
//!
//! A wide backend's GCM tables (key powers laid out per ymm or zmm
//! register, round keys broadcast) are only read by messages longer than a
//! few blocks: they live in a [`LazyBox`], a `SecretBox` made on the first
//! such message, so a key that only ever seals short records (or none)
//! does not pay for them.
//!
//! This is the one module outside the per-ISA backends with `unsafe`: the
//! allocation, the byte copy of `Clone`, the wipe, and the publication of a
//! [`LazyBox`]'s contents.
#![allow(unsafe_code)]

use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};

/// Plain key-schedule data that may live in a [`SecretBox`].
///
/// # Safety
/// Implementors promise that the all-zero bit pattern is a valid value,
/// that the type has no drop glue, and that it holds no pointers or
/// references (so a byte copy is an independent, valid value). Whatever
/// invariant a zeroed value must meet before use (CPU features detected for
/// a backend key) is the business of [`SecretBox::zeroed`]'s caller.
pub(crate) unsafe trait Schedule: Sized {
    /// Values of the type exist only after AVX was detected (the wide
    /// backends' keys; an implementor that sets this promises it), so a
    /// [`SecretBox`] of one of 256 bytes or more, aligned to 32 bytes, is
    /// zeroed on allocation and wiped on drop with 32-byte stores. For
    /// these sizes glibc's `calloc` and `memset` use `rep stosb`, which
    /// measured about half the speed on AMD Zen 4 (a 3.5 KiB GCM key:
    /// ~35 ns each way), and 16-byte stores take twice as many: the wipe
    /// of a 512-byte `vaes` AES key was about a sixth of its setup.
    const AVX: bool = false;
}

/// A [`Schedule`] whose zeroed value needs nothing else (no CPU feature):
/// [`SecretBox::new`] makes one without `unsafe`.
///
/// # Safety
/// A zeroed value may be used by every safe method of the type.
pub(crate) unsafe trait Portable: Schedule {}

// The portable schedules, declared here so that their modules need no
// `unsafe`.
// SAFETY: `soft::Key` is integers only (`[[u64; 8]; 15]` and `usize`): zero
// is valid (an empty key), no drop glue, no pointers, no CPU features.
unsafe impl Schedule for crate::aes::soft::Key {}
// SAFETY: as above.
unsafe impl Portable for crate::aes::soft::Key {}

// SAFETY: a `soft::Key` (above) and a `u128`: the same.
unsafe impl Schedule for crate::gcm::ghash_soft::Key {}
// SAFETY: as above.
unsafe impl Portable for crate::gcm::ghash_soft::Key {}

// SAFETY: eight `u32`s: the same.
unsafe impl Schedule for crate::chacha20poly1305::KeyWords {}
// SAFETY: as above.
unsafe impl Portable for crate::chacha20poly1305::KeyWords {}

// SAFETY: sixteen `u32`s: the same.
unsafe impl Schedule for crate::chacha20poly1305::StateWords {}
// SAFETY: as above.
unsafe impl Portable for crate::chacha20poly1305::StateWords {}

/// A heap-allocated `T`, made zeroed and filled in place, wiped when dropped;
/// `Clone` copies the bytes heap to heap. `Debug` is the owner's business
/// (owners never print a schedule).
pub(crate) struct SecretBox<T: Schedule> {
    /// The `T`; for a `T` aligned to more than 16 bytes, the byte before it
    /// holds its offset from the start of the allocation (see
    /// [`SecretBox::ALLOC`]), so a key handle stays one pointer.
    ptr: NonNull<T>,
}

// SAFETY: `SecretBox<T>` owns its `T` exclusively (like `Box<T>`); schedules
// are plain data.
unsafe impl<T: Schedule + Send> Send for SecretBox<T> {}
// SAFETY: shared access only hands out `&T` (like `Box<T>`).
unsafe impl<T: Schedule + Sync> Sync for SecretBox<T> {}

impl<T: Schedule> SecretBox<T> {
    /// The allocation: `T`'s size at `T`'s alignment up to 16 bytes; for a
    /// `T` aligned to more (the wide keys: 32 or 64), 16-byte aligned with
    /// `align_of::<T>()` bytes of room to align it inside, at an offset of
    /// 16 to `align_of::<T>()` bytes (recorded in the byte before it).
    /// `malloc` gives 16-byte alignment for free, while an aligned
    /// allocation (`memalign`) splits off and frees the unused ends, and
    /// glibc's next large allocation then consolidates those small free
    /// blocks: about a tenth of a wide GCM key's setup.
    const ALLOC: Layout = {
        assert!(!core::mem::needs_drop::<T>(), "a schedule has no drop glue");
        assert!(size_of::<T>() > 0, "a schedule is not zero-sized");
        let align = align_of::<T>();
        assert!(align <= 64, "a schedule is aligned to at most 64 bytes");
        let (size, align) = if align > 16 {
            (size_of::<T>() + align, 16)
        } else {
            (size_of::<T>(), align)
        };
        match Layout::from_size_align(size, align) {
            Ok(layout) => layout,
            Err(_) => panic!("a schedule's layout"),
        }
    };

    /// A home this thread kept when it dropped a `SecretBox<T>` (see
    /// [`kept`]): its `T` is all zero (wiped on drop).
    fn reuse() -> Option<SecretBox<T>> {
        let b = Self::at(kept::take(Self::ALLOC, align_of::<T>())?);
        #[cfg(debug_assertions)]
        {
            // SAFETY: `size_of::<T>()` bytes of the kept allocation, where
            // the wipe wrote zeroes.
            let bytes =
                unsafe { core::slice::from_raw_parts(b.ptr.as_ptr().cast::<u8>(), size_of::<T>()) };
            debug_assert!(bytes.iter().all(|&x| x == 0), "a kept home is wiped");
        }
        Some(b)
    }

    /// An allocation for one `T`, for the caller to fill: a kept one, or a
    /// fresh (uninitialised) one.
    fn allocate() -> SecretBox<T> {
        Self::reuse().unwrap_or_else(Self::fresh)
    }

    /// A fresh, uninitialised allocation for one `T`.
    fn fresh() -> SecretBox<T> {
        let layout = Self::ALLOC;
        // SAFETY: the layout has a non-zero size (checked in `ALLOC`).
        let base = unsafe { alloc(layout) };
        let Some(base) = NonNull::new(base) else {
            handle_alloc_error(layout)
        };
        Self::at(base)
    }

    /// The `T`'s place in the allocation at `base` (of layout `ALLOC`).
    fn at(base: NonNull<u8>) -> SecretBox<T> {
        if align_of::<T>() <= 16 {
            // `base` is aligned to `T`'s alignment.
            return SecretBox { ptr: base.cast() };
        }
        // `base` is 16-byte aligned: the next multiple of `T`'s alignment
        // at least 16 bytes on is at most `align_of::<T>()` bytes on.
        let align = align_of::<T>();
        let offset = align - (base.as_ptr().addr() & (align - 1) & !15);
        // SAFETY: `offset + size_of::<T>() <= align + size_of::<T>()`, the
        // allocation's size; `offset >= 16`, so the byte before `ptr` is
        // in it too, before the `T`.
        let ptr = unsafe {
            let ptr = base.add(offset);
            // `offset <= align <= 64` (`ALLOC` checks the alignment).
            ptr.sub(1).write(offset as u8);
            ptr.cast::<T>()
        };
        SecretBox { ptr }
    }

    /// The start of the allocation.
    fn base(&self) -> *mut u8 {
        let p = self.ptr.as_ptr().cast::<u8>();
        if align_of::<T>() <= 16 {
            return p;
        }
        // SAFETY: `allocate` wrote the offset (16 to 64) in the byte before
        // the `T`, inside the allocation.
        unsafe { p.sub(usize::from(p.sub(1).read())) }
    }

    /// Zeroed and wiped with [`zero_wide`] (see [`Schedule::AVX`]).
    const WIDE: bool = cfg!(all(target_arch = "x86_64", not(miri)))
        && T::AVX
        && size_of::<T>() >= 256
        && align_of::<T>() >= 32;

    /// Not [`Self::WIDE`] (the type exists without AVX) but 32-byte
    /// aligned and large enough: zeroed and wiped with [`zero_wide`] where
    /// this CPU has AVX after all (a run-time check, one cached load), as
    /// the AES-NI keys are on every AVX machine: half the stores of the
    /// 16-byte wipe (an AES-128 key 30 -> 27 ns on Zen 4).
    const WIDE_IF_AVX: bool = cfg!(all(target_arch = "x86_64", not(miri)))
        && !Self::WIDE
        && size_of::<T>() >= 256
        && align_of::<T>() >= 32;

    /// Otherwise zeroed and wiped with [`zero_sse`]: for 128 bytes or more
    /// glibc's `memset` takes `rep stosb`, whose start-up cost made the two
    /// `memset`s of a 512-byte AES-NI GCM key (made, then dropped) about
    /// 30% of its setup (AMD Zen 4).
    const SSE: bool = cfg!(all(target_arch = "x86_64", not(miri)))
        && size_of::<T>() >= 128
        && align_of::<T>() >= 16;

    /// Zeroes the `T` at `p` with the widest stores its type allows, in a
    /// way the compiler must keep.
    ///
    /// # Safety
    /// `p` is valid for writes of a `T` and aligned; a `T` may be made (for
    /// `T::AVX`: AVX was detected).
    unsafe fn zero(p: *mut u8) {
        if Self::WIDE {
            // SAFETY: `size_of::<T>()` writable bytes, aligned to 32
            // (`WIDE`); AVX was detected (`T::AVX` and the caller's promise).
            unsafe { zero_wide(p, size_of::<T>()) };
        } else if Self::WIDE_IF_AVX && has_avx() {
            // SAFETY: `size_of::<T>()` writable bytes, aligned to 32
            // (`WIDE_IF_AVX`); AVX was detected just now.
            unsafe { zero_wide(p, size_of::<T>()) };
        } else if Self::SSE {
            // SAFETY: `size_of::<T>()` writable bytes, aligned to 16 (`SSE`).
            unsafe { zero_sse(p, size_of::<T>()) };
        } else {
            // SAFETY: `size_of::<T>()` writable bytes.
            unsafe { core::ptr::write_bytes(p, 0, size_of::<T>()) };
        }
        barrier(p);
    }

    /// A zeroed `T` on the heap, to be filled in place through `DerefMut`.
    ///
    /// A home this thread kept (already zero), or else `malloc` and our
    /// own zeroing, never `calloc`: glibc's
    /// `calloc` skips the per-thread cache of small blocks, so a key made
    /// and dropped in a loop went through `_int_malloc` and the
    /// consolidation of free neighbours (`unlink_chunk`) every time, while
    /// `free` fills that cache: a third of an AES key's setup in
    /// `hwcrypt speed` (75 -> 50 ns per AES-128 key, 137 -> 90 per XTS key,
    /// AMD Zen 4).
    ///
    /// # Safety
    /// The caller makes sure a zeroed `T` may be used as its type's safe
    /// methods expect: for a backend key, that the CPU features its kernels
    /// need were detected (as the backend's own constructor would check).
    pub(crate) unsafe fn zeroed() -> SecretBox<T> {
        if let Some(b) = Self::reuse() {
            return b;
        }
        let b = Self::fresh();
        let p = b.ptr.as_ptr().cast::<u8>();
        // Kept apart, or LLVM merges `malloc` and the zeroing into `calloc`.
        barrier(p);
        // SAFETY: a fresh allocation for one `T`, aligned; all-zero is a
        // valid `T` (`Schedule`) and the caller may make one (this
        // function's contract).
        unsafe { Self::zero(p) };
        b
    }

    /// An uninitialised `T` on the heap, for the caller to write in full
    /// through [`SecretBox::as_mut_ptr`]: for a schedule whose constructor
    /// writes every byte anyway, the zeroing of [`SecretBox::zeroed`] is
    /// dead work (about a tenth of an AES key's setup).
    ///
    /// # Safety
    /// As [`SecretBox::zeroed`]; and until the caller has written a whole,
    /// valid `T` through `as_mut_ptr` (padding aside), the box is only
    /// written through that pointer or dropped (the wipe only writes):
    /// never dereferenced or cloned.
    pub(crate) unsafe fn uninit() -> SecretBox<T> {
        Self::allocate()
    }

    /// The `T`'s address, for writing one in place (see
    /// [`SecretBox::uninit`]).
    pub(crate) fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// A zeroed `T` on the heap, to be filled in place.
    pub(crate) fn new() -> SecretBox<T>
    where
        T: Portable,
    {
        // SAFETY: a zeroed `Portable` value has no further invariant.
        unsafe { SecretBox::zeroed() }
    }

    /// Overwrites the whole allocation with zeroes in a way the compiler
    /// must keep (see the module docs); the value stays a valid `T`.
    pub(crate) fn wipe(&mut self) {
        // SAFETY: the `T` we own exclusively (`&mut self`), aligned; it
        // exists, so it may be made; all-zero is a valid `T` (`Schedule`).
        unsafe { Self::zero(self.ptr.as_ptr().cast()) };
    }
}

/// The memory of a key schedule (in its heap home), as an (address,
/// length) pair for the stack-residue test's `secret_regions` hooks.
#[cfg(feature = "residue-test")]
pub(crate) fn region_of<T>(t: &T) -> (usize, usize) {
    (core::ptr::from_ref(t) as usize, size_of::<T>())
}

/// Zeroes `buf` with wide stores that the compiler must keep (the same
/// idiom as [`SecretBox::wipe`]): the wipe for key material in stack
/// buffers, where `zeroize`'s volatile byte stores cost about a cycle a
/// byte (hundreds of cycles for a table of key powers).
pub(crate) fn wipe_bytes(buf: &mut [u8]) {
    buf.fill(0);
    barrier(buf.as_mut_ptr());
}

/// Whether this CPU runs AVX (the detection, not the `HWCRYPT_CPU` mask:
/// the wipe's stores are no backend's choice).
#[inline]
fn has_avx() -> bool {
    use crate::cpu::{self, Feature, Features};
    cpu::detected().contains(Features::of(&[Feature::Avx]))
}

/// Zeroes `len` bytes at `p` with 32-byte stores (volatile: LLVM turns a
/// plain loop of zero stores back into a `memset` call).
///
/// # Safety
/// `p` is valid for writes of `len` bytes and 32-byte aligned; the CPU
/// supports AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn zero_wide(p: *mut u8, len: usize) {
    use core::arch::x86_64::{__m256i, _mm256_setzero_si256};
    let mut i = 0;
    while i + 32 <= len {
        // SAFETY: `i + 32 <= len` writable bytes; `p + i` is 32-byte aligned.
        unsafe { core::ptr::write_volatile(p.add(i).cast::<__m256i>(), _mm256_setzero_si256()) };
        i += 32;
    }
    while i < len {
        // SAFETY: `i < len`.
        unsafe { core::ptr::write_volatile(p.add(i), 0) };
        i += 1;
    }
}

/// Zeroes `len` bytes at `p` with 16-byte stores (volatile, as in
/// [`zero_wide`]).
///
/// # Safety
/// `p` is valid for writes of `len` bytes and 16-byte aligned.
#[cfg(target_arch = "x86_64")]
unsafe fn zero_sse(p: *mut u8, len: usize) {
    use core::arch::x86_64::{__m128i, _mm_setzero_si128};
    let mut i = 0;
    while i + 16 <= len {
        // SAFETY: `i + 16 <= len` writable bytes; `p + i` is 16-byte
        // aligned; SSE2 is part of x86-64.
        unsafe { core::ptr::write_volatile(p.add(i).cast::<__m128i>(), _mm_setzero_si128()) };
        i += 16;
    }
    while i < len {
        // SAFETY: `i < len`.
        unsafe { core::ptr::write_volatile(p.add(i), 0) };
        i += 1;
    }
}

/// Never called: `SecretBox::SSE` is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn zero_sse(p: *mut u8, len: usize) {
    // SAFETY: the caller's promise.
    unsafe { core::ptr::write_bytes(p, 0, len) };
}

/// Never called: `SecretBox::WIDE` is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn zero_wide(p: *mut u8, len: usize) {
    // SAFETY: the caller's promise.
    unsafe { core::ptr::write_bytes(p, 0, len) };
}

/// Tells the compiler that memory at `p` may be read here, so stores to it
/// before this point are kept.
#[inline(always)]
fn barrier(p: *mut u8) {
    // Miri runs no inline assembly: there the portable form below stands in.
    #[cfg(all(
        not(miri),
        any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")
    ))]
    // SAFETY: an empty instruction sequence; it only takes `p` as an input
    // (without `nomem`, the compiler assumes it may read memory).
    unsafe {
        core::arch::asm!("/* {0} */", in(reg) p, options(nostack, preserves_flags));
    }
    #[cfg(any(
        miri,
        not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64"))
    ))]
    {
        core::hint::black_box(p);
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

impl<T: Schedule> Deref for SecretBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: `ptr` is a live, initialised `T` we own.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: Schedule> DerefMut for SecretBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and `&mut self` makes the access exclusive.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: Schedule> Clone for SecretBox<T> {
    /// A byte copy, heap to heap: no copy of the schedule on the stack.
    fn clone(&self) -> SecretBox<T> {
        let copy = Self::allocate();
        // SAFETY: both are valid for `size_of::<T>()` bytes and do not
        // overlap (a fresh or kept allocation, not `self`'s); a byte copy
        // of a `Schedule` is an independent valid value, and it met the
        // same invariants as `self`.
        unsafe { core::ptr::copy_nonoverlapping(self.ptr.as_ptr(), copy.ptr.as_ptr(), 1) };
        copy
    }
}

/// A [`SecretBox`] made on first use, through a shared reference: the
/// first caller of [`LazyBox::get_or_make`] makes it, every later one
/// (any thread) reads it. Two threads that both find it empty both make
/// one; the first to publish wins and the other's is wiped and freed, so
/// no caller ever waits. Wiped and freed with its owner.
pub(crate) struct LazyBox<T: Schedule> {
    /// Null, or a `SecretBox<T>`'s pointer, published once (never changed
    /// after, until drop).
    ptr: AtomicPtr<T>,
    /// Owns a `SecretBox<T>` (and is `Send`/`Sync` as one is).
    owns: PhantomData<SecretBox<T>>,
}

impl<T: Schedule> LazyBox<T> {
    /// Nothing made yet.
    pub(crate) const fn empty() -> LazyBox<T> {
        LazyBox {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
            owns: PhantomData,
        }
    }

    /// The value, if it was made.
    pub(crate) fn get(&self) -> Option<&T> {
        // Acquire: pairs with the publishing compare-exchange, so the
        // value's bytes written before it are visible here.
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: non-null means a published `SecretBox<T>` that this value
        // owns, is never written again and lives until `self` is dropped
        // (which `&self` rules out meanwhile).
        unsafe { p.as_ref() }
    }

    /// The value, made with `make` first if there is none yet.
    #[inline]
    pub(crate) fn get_or_make(&self, make: impl FnOnce() -> SecretBox<T>) -> &T {
        match self.get() {
            Some(t) => t,
            None => self.make(make),
        }
    }

    /// The slow path of [`LazyBox::get_or_make`], kept out of the kernels
    /// that call it (inlined, it cost ~4% at 256 B).
    #[cold]
    #[inline(never)]
    fn make(&self, make: impl FnOnce() -> SecretBox<T>) -> &T {
        let made = core::mem::ManuallyDrop::new(make());
        let p = made.ptr.as_ptr();
        match self.ptr.compare_exchange(
            core::ptr::null_mut(),
            p,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: published just now: owned by `self` from here on, and
            // (as in `get`) never written again while `&self` lives.
            Ok(_) => unsafe { &*p },
            Err(first) => {
                // Another thread published first: ours is wiped and freed.
                drop(core::mem::ManuallyDrop::into_inner(made));
                // SAFETY: `first` is non-null (the exchange failed on it),
                // published as in `get`.
                unsafe { &*first }
            }
        }
    }
}

impl<T: Schedule> Clone for LazyBox<T> {
    /// A copy of the value if it was made (heap to heap), else empty.
    fn clone(&self) -> LazyBox<T> {
        let copy = LazyBox::empty();
        if let Some(t) = self.get() {
            // A borrowed view of the published box, not dropped here.
            let view = core::mem::ManuallyDrop::new(SecretBox {
                ptr: NonNull::from(t),
            });
            let made = core::mem::ManuallyDrop::new(SecretBox::clone(&view));
            copy.ptr.store(made.ptr.as_ptr(), Ordering::Relaxed);
        }
        copy
    }
}

impl<T: Schedule> Drop for LazyBox<T> {
    fn drop(&mut self) {
        if let Some(ptr) = NonNull::new(*self.ptr.get_mut()) {
            // SAFETY: a published `SecretBox<T>`'s pointer, owned by `self`
            // (`&mut self`: no reference into it is left); dropped once.
            drop(SecretBox { ptr });
        }
    }
}

impl<T: Schedule> Drop for SecretBox<T> {
    fn drop(&mut self) {
        self.wipe();
        let base = self.base();
        // SAFETY: `base()` is non-null (the start of a live allocation).
        let base_nn = unsafe { NonNull::new_unchecked(base) };
        if !kept::keep(base_nn, Self::ALLOC, align_of::<T>()) {
            // SAFETY: allocated by `allocate` with this layout, at `base()`.
            unsafe { dealloc(base, Self::ALLOC) };
        }
    }
}

/// Homes of dropped keys, kept by the thread that dropped them for its
/// next key of the same size and alignment. A key made and dropped per
/// connection or per record (the fixed cost issue 17 is about) otherwise
/// pays `malloc` and `free` each time: more than half of a
/// ChaCha20-Poly1305 key's 13 ns and about a fifth of an AES key's (AMD
/// Zen 4). A kept home was wiped (its `T` zeroed) before it was kept, so
/// [`SecretBox::zeroed`] takes it as it is.
/// At most [`KEPT`](kept::KEPT) homes per thread; they are freed when the
/// thread exits (a drop during that, or after, frees at once), except the
/// main thread's, whose thread-local destructors may not run: those few
/// wiped blocks stay until the process ends.
mod kept {
    use core::cell::Cell;
    use core::ptr::NonNull;
    use std::alloc::{Layout, dealloc};

    /// Homes kept per thread: a connection's keys (two AES-GCM keys, an
    /// XTS key's two schedules) with room to spare.
    pub(super) const KEPT: usize = 4;

    /// One kept home: the allocation's start and layout, and the alignment
    /// of the `T` it held (with the layout, where that `T` lay: the part
    /// that is zero).
    #[derive(Clone, Copy)]
    struct Home {
        base: NonNull<u8>,
        layout: Layout,
        t_align: usize,
    }

    struct Shelf {
        slots: [Cell<Option<Home>>; KEPT],
        /// The slot a full shelf gives up next (round robin over the
        /// slots: not strictly the home kept longest ago, since `take`
        /// empties slots in any order; enough that no kind of home holds
        /// the shelf for good).
        oldest: Cell<usize>,
    }

    impl Drop for Shelf {
        fn drop(&mut self) {
            for slot in &self.slots {
                if let Some(h) = slot.take() {
                    // SAFETY: a `SecretBox` allocation of this layout, owned
                    // by the shelf alone since its box was dropped.
                    unsafe { dealloc(h.base.as_ptr(), h.layout) };
                }
            }
        }
    }

    thread_local! {
        static SHELF: Shelf = const {
            Shelf {
                slots: [const { Cell::new(None) }; KEPT],
                oldest: Cell::new(0),
            }
        };
    }

    /// A kept home of `layout` that held a `T` aligned to `t_align`.
    #[inline]
    pub(super) fn take(layout: Layout, t_align: usize) -> Option<NonNull<u8>> {
        SHELF
            .try_with(|shelf| {
                shelf.slots.iter().find_map(|slot| {
                    let h = slot.get()?;
                    (h.layout == layout && h.t_align == t_align).then(|| {
                        slot.set(None);
                        h.base
                    })
                })
            })
            .ok()
            .flatten()
    }

    /// Keeps the wiped home at `base`, in a free slot or else in place of
    /// the next slot in round robin (whose home is freed), so homes of
    /// types no longer made do not fill the shelf for good; false if the
    /// caller must free it (the thread is exiting).
    #[inline]
    pub(super) fn keep(base: NonNull<u8>, layout: Layout, t_align: usize) -> bool {
        SHELF
            .try_with(|shelf| {
                let home = Home {
                    base,
                    layout,
                    t_align,
                };
                if let Some(slot) = shelf.slots.iter().find(|slot| slot.get().is_none()) {
                    slot.set(Some(home));
                } else {
                    let i = shelf.oldest.get();
                    shelf.oldest.set((i + 1) % KEPT);
                    if let Some(old) = shelf.slots[i].replace(Some(home)) {
                        // SAFETY: as in `Shelf::drop`.
                        unsafe { dealloc(old.base.as_ptr(), old.layout) };
                    }
                }
                true
            })
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(64))]
    struct Table([u64; 40]);
    // SAFETY: plain integers, no drop glue, no pointers.
    unsafe impl Schedule for Table {}

    /// A schedule of the size and alignment that takes the 32-byte-store path.
    #[repr(C, align(64))]
    struct WideTable([u64; 200]);
    // SAFETY: plain integers, no drop glue, no pointers; values are made
    // below only after AVX was detected.
    unsafe impl Schedule for WideTable {
        const AVX: bool = true;
    }

    #[test]
    fn wide_schedules_are_zeroed_and_wiped() {
        if !crate::cpu::detected().contains(crate::cpu::Features::of(&[crate::cpu::Feature::Avx])) {
            eprintln!("no AVX: skipped");
            return;
        }
        assert!(cfg!(miri) || core::hint::black_box(SecretBox::<WideTable>::WIDE));
        for _ in 0..4 {
            // SAFETY: AVX was detected; `WideTable` has no other invariant.
            let mut a = unsafe { SecretBox::<WideTable>::zeroed() };
            assert!(a.0.iter().all(|&w| w == 0));
            a.0.fill(u64::MAX);
            a.wipe();
            assert!(a.0.iter().all(|&w| w == 0));
            a.0.fill(0x5a5a_5a5a);
        }
    }

    #[test]
    fn zeroed_filled_cloned_wiped() {
        // SAFETY: `Table` has no invariants.
        let mut a = unsafe { SecretBox::<Table>::zeroed() };
        assert!(a.0.iter().all(|&w| w == 0));
        assert_eq!(a.ptr.as_ptr() as usize % 64, 0);
        for (i, w) in a.0.iter_mut().enumerate() {
            *w = i as u64 * 0x0101_0101;
        }
        let b = a.clone();
        assert_eq!(a.0, b.0);
        assert_ne!(a.ptr, b.ptr);
        a.wipe();
        assert!(a.0.iter().all(|&w| w == 0));
        assert_eq!(b.0[3], 3 * 0x0101_0101);
    }

    /// A small schedule (4-byte aligned, the plain allocation path).
    struct Words([u32; 8]);
    // SAFETY: plain integers, no drop glue, no pointers.
    unsafe impl Schedule for Words {}

    #[test]
    fn dropped_homes_are_kept_wiped_and_reused_by_their_type() {
        // A thread of its own: the shelf is per thread.
        std::thread::spawn(|| {
            let mut t = table(7);
            let home = t.ptr;
            drop(t);
            // Another type does not take the `Table` home.
            // SAFETY: `Words` has no invariants.
            let mut w = unsafe { SecretBox::<Words>::zeroed() };
            w.0.fill(9);
            // The same type does, zeroed (the wipe on drop).
            // SAFETY: `Table` has no invariants.
            t = unsafe { SecretBox::<Table>::zeroed() };
            assert_eq!(t.ptr, home);
            assert!(t.0.iter().all(|&x| x == 0));
            assert_eq!(t.ptr.as_ptr() as usize % 64, 0);
            // More homes dropped than the shelf holds: the extra ones are
            // freed (Miri checks that each home is freed once), the rest kept.
            drop(t);
            drop(w);
            let many: Vec<SecretBox<Words>> = (0..2 * kept::KEPT)
                // SAFETY: `Words` has no invariants.
                .map(|_| unsafe { SecretBox::zeroed() })
                .collect();
            drop(many);
            // SAFETY: `Words` has no invariants.
            let w = unsafe { SecretBox::<Words>::zeroed() };
            assert!(w.0.iter().all(|&x| x == 0));
            let c = w.clone();
            assert_ne!(c.ptr, w.ptr);
        })
        .join()
        .unwrap();
    }

    fn table(seed: u64) -> SecretBox<Table> {
        // SAFETY: `Table` has no invariants.
        let mut t = unsafe { SecretBox::<Table>::zeroed() };
        for (i, w) in t.0.iter_mut().enumerate() {
            *w = seed ^ i as u64;
        }
        t
    }

    #[test]
    fn lazy_box_is_made_once_and_cloned_as_it_stands() {
        let lazy = LazyBox::<Table>::empty();
        assert!(lazy.get().is_none());
        assert!(lazy.clone().get().is_none());
        let mut calls = 0;
        let a = lazy.get_or_make(|| {
            calls += 1;
            table(7)
        });
        assert_eq!(a.0[5], 7 ^ 5);
        let b = lazy.get_or_make(|| {
            calls += 1;
            table(9)
        });
        assert_eq!(calls, 1);
        assert!(core::ptr::eq(a, b));
        let copy = lazy.clone();
        let c = copy.get().expect("a made box is cloned with its value");
        assert_eq!(c.0, a.0);
        assert!(!core::ptr::eq(a, c));
    }

    #[test]
    fn lazy_box_racing_makers_agree() {
        let lazy = LazyBox::<Table>::empty();
        let seen: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4u64)
                .map(|i| {
                    let lazy = &lazy;
                    s.spawn(move || lazy.get_or_make(|| table(100 + i)).0[0])
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let first = lazy.get().expect("made").0[0];
        assert!((100..104).contains(&first));
        assert!(seen.iter().all(|&v| v == first), "{seen:?} vs {first}");
    }
}
