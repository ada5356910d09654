//! A buffer that is either transformed in place or read from one slice and
//! written to another, so every kernel serves both call shapes without a copy.
//!
//! Kernels in the per-ISA files take raw pointers from [`InOut::ptrs`]
//! (one call, so that in place both pointers share one provenance); both
//! cover exactly [`InOut::len`] bytes. In place they
//! are equal, so a kernel must load an input block before it stores that
//! block (all block-wise kernels do), and must not read it as input after
//! it stored over it (reading back output it wrote, as GCM's seal does to
//! hash the ciphertext, is fine). Separate buffers never overlap (the
//! borrow checker guarantees it).

/// Input and output of one cipher call; see the module docs.
#[derive(Debug)]
pub(crate) enum InOut<'a> {
    /// Transform `buf` in place.
    InPlace(&'a mut [u8]),
    /// Read `input`, write `output` (same length).
    Separate {
        input: &'a [u8],
        output: &'a mut [u8],
    },
}

impl<'a> InOut<'a> {
    /// Separate buffers; `None` if their lengths differ.
    #[inline]
    pub(crate) fn separate(input: &'a [u8], output: &'a mut [u8]) -> Option<InOut<'a>> {
        (input.len() == output.len()).then_some(InOut::Separate { input, output })
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            InOut::InPlace(buf) => buf.len(),
            InOut::Separate { input, .. } => input.len(),
        }
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(src, dst)`: the start of the bytes to read and of the bytes to
    /// write, both covering [`InOut::len`] bytes.
    ///
    /// In place both come from one `as_mut_ptr()` of the one buffer, so
    /// they are the same pointer with the same provenance: a kernel may
    /// read through `src` and write through `dst` in any order the module
    /// docs allow. (Taking `src` from `as_ptr()` and then `dst` from a
    /// second, mutable borrow would invalidate `src` under Rust's aliasing
    /// rules: undefined behaviour that Miri reports.)
    #[inline]
    pub(crate) fn ptrs(&mut self) -> (*const u8, *mut u8) {
        match self {
            InOut::InPlace(buf) => {
                let p = buf.as_mut_ptr();
                (p.cast_const(), p)
            }
            InOut::Separate { input, output } => (input.as_ptr(), output.as_mut_ptr()),
        }
    }

    /// The addresses of the input and output buffers, for layout decisions
    /// (never dereferenced).
    #[inline]
    pub(crate) fn addrs(&self) -> (usize, usize) {
        match self {
            InOut::InPlace(buf) => (buf.as_ptr().addr(), buf.as_ptr().addr()),
            InOut::Separate { input, output } => (input.as_ptr().addr(), output.as_ptr().addr()),
        }
    }

    /// The output buffer, holding the input: separate buffers are copied
    /// first, so a kernel that only works in place can serve both shapes.
    #[inline]
    pub(crate) fn into_in_place(self) -> &'a mut [u8] {
        match self {
            InOut::InPlace(buf) => buf,
            InOut::Separate { input, output } => {
                output.copy_from_slice(input);
                output
            }
        }
    }

    /// Splits into `[..mid]` and `[mid..]`. Panics if `mid > len` (internal use only).
    #[inline]
    pub(crate) fn split_at(self, mid: usize) -> (InOut<'a>, InOut<'a>) {
        match self {
            InOut::InPlace(buf) => {
                let (a, b) = buf.split_at_mut(mid);
                (InOut::InPlace(a), InOut::InPlace(b))
            }
            InOut::Separate { input, output } => {
                let (ia, ib) = input.split_at(mid);
                let (oa, ob) = output.split_at_mut(mid);
                (
                    InOut::Separate {
                        input: ia,
                        output: oa,
                    },
                    InOut::Separate {
                        input: ib,
                        output: ob,
                    },
                )
            }
        }
    }

    /// Copies input bytes `[offset..offset + dst.len()]` into `dst`.
    #[inline]
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) {
        let src = match self {
            InOut::InPlace(buf) => &buf[offset..offset + dst.len()],
            InOut::Separate { input, .. } => &input[offset..offset + dst.len()],
        };
        dst.copy_from_slice(src);
    }

    /// Copies `src` into output bytes `[offset..offset + src.len()]`.
    #[inline]
    pub(crate) fn write(&mut self, offset: usize, src: &[u8]) {
        let dst = match self {
            InOut::InPlace(buf) => &mut buf[offset..offset + src.len()],
            InOut::Separate { output, .. } => &mut output[offset..offset + src.len()],
        };
        dst.copy_from_slice(src);
    }

    /// Input byte `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> u8 {
        match self {
            InOut::InPlace(buf) => buf[i],
            InOut::Separate { input, .. } => input[i],
        }
    }

    /// Sets output byte `i`.
    #[inline]
    pub(crate) fn set(&mut self, i: usize, value: u8) {
        match self {
            InOut::InPlace(buf) => buf[i] = value,
            InOut::Separate { output, .. } => output[i] = value,
        }
    }

    /// Output = input XOR `keystream` (byte-wise, `keystream.len() == self.len()`).
    #[inline]
    pub(crate) fn xor_keystream(&mut self, keystream: &[u8]) {
        debug_assert_eq!(keystream.len(), self.len());
        // Eight bytes at a time, then the rest: a short piece written byte
        // by byte cannot be forwarded to the next 8-byte load of it (the
        // AEAD's MAC reads the ciphertext it just wrote as words), and
        // waited ~20 cycles for the bytes to reach the cache.
        fn words(out: &mut [u8], input: Option<&[u8]>, keystream: &[u8]) {
            let n = out.len() - out.len() % 8;
            let (out_words, out_rest) = out.split_at_mut(n);
            for (j, o) in out_words.chunks_exact_mut(8).enumerate() {
                let at = 8 * j;
                let word =
                    |b: &[u8]| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
                let i = input.map_or_else(
                    || u64::from_ne_bytes(o[..8].try_into().unwrap_or([0; 8])),
                    word,
                );
                o.copy_from_slice(&(i ^ word(keystream)).to_ne_bytes());
            }
            for (j, o) in out_rest.iter_mut().enumerate() {
                *o = input.map_or(*o, |i| i[n + j]) ^ keystream[n + j];
            }
        }
        match self {
            InOut::InPlace(buf) => words(buf, None, keystream),
            InOut::Separate { input, output } => words(output, Some(input), keystream),
        }
    }
}
