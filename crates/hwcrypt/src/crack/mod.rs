//! Known-plaintext AES key search over a described key space.
//!
//! A [`KeySpace`] says which values each key byte may take; a [`Challenge`]
//! holds the ciphertext, its mode (ECB, CBC with or without the IV, CTR) and
//! what the right plaintext looks like ([`Predicate`]s: contains a string,
//! known bytes at an offset, looks like text). [`Search`] walks the space
//! (or one shard of it) on all cores: keys go through the AES unit in
//! batches (several key schedules interleaved, two keys per ymm register
//! with VAES, four per zmm with AVX-512), a fast filter checks one or a few
//! ciphertext blocks, and the keys that pass are confirmed by decrypting the
//! whole message.
//!
//! ```
//! use hwcrypt::crack::{Challenge, KeySpace, Mode, Padding, Predicate, Search, SearchOptions};
//! use hwcrypt::{aes::Aes, modes::Cbc};
//! // A key whose first 2 bytes are unknown (each 0..=16), the rest zero.
//! let mut key = [0u8; 32];
//! key[..2].copy_from_slice(&[3, 14]);
//! let mut ct = Cbc::new(Aes::new(&key)?, &[7; 16])?
//!     .encrypt_padded(b"Attack at dawn; bring the ladders and the rope.");
//! let space = KeySpace::parse("0..=16*2, 0*30")?;
//! let challenge = Challenge::new(ct, Mode::Cbc { iv: None }, Padding::Auto,
//!     vec![Predicate::Text { min_ratio: 1.0, utf8: false }])?;
//! let outcome = Search::new(&space, &challenge, SearchOptions::default())?.run(|_| {});
//! assert_eq!(outcome.hits[0].key, key);
//! # Ok::<(), hwcrypt::Error>(())
//! ```

#[macro_use]
mod kernel;
mod keyspace;
mod predicate;

#[cfg(target_arch = "x86_64")]
mod batch_aesni;
#[cfg(target_arch = "x86_64")]
mod batch_vaes_avx2;
#[cfg(target_arch = "x86_64")]
mod batch_vaes_avx512;

#[cfg(test)]
mod tests;

pub use keyspace::{ByteSet, KeySpace, MAX_KEYS};
pub use predicate::{Challenge, MAX_FILTER_BLOCKS, Mode, Padding, Predicate};

use crate::aes::Aes;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::registry::{self, Algorithm};
use kernel::{KeyBatch, MAX_BATCH};
use keyspace::Odometer;
use predicate::Plan;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A batch filter bound to one backend (the CPU features were checked when
/// it was made).
#[derive(Clone, Copy, Debug)]
enum Kernel {
    Soft,
    #[cfg(target_arch = "x86_64")]
    AesNi(batch_aesni::Kernel),
    #[cfg(target_arch = "x86_64")]
    VaesAvx2(batch_vaes_avx2::Kernel),
    #[cfg(target_arch = "x86_64")]
    VaesAvx512(batch_vaes_avx512::Kernel),
}

impl Kernel {
    /// The kernel of `backend`, if the registry has it for
    /// [`Algorithm::AesKeySearch`] and this (masked) CPU can run it.
    fn new(backend: Backend) -> Result<Kernel> {
        registry::check(Algorithm::AesKeySearch, backend)?;
        // The registry rows require what each kernel's constructor checks,
        // so after `check` these succeed; `check` gives the error otherwise.
        let detected = match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => batch_aesni::Kernel::new().map(Kernel::AesNi),
            #[cfg(target_arch = "x86_64")]
            Backend::VaesAvx2 => batch_vaes_avx2::Kernel::new().map(Kernel::VaesAvx2),
            #[cfg(target_arch = "x86_64")]
            Backend::VaesAvx512 => batch_vaes_avx512::Kernel::new().map(Kernel::VaesAvx512),
            _ => Some(Kernel::Soft),
        };
        detected.ok_or(Error::BackendUnavailable {
            algorithm: Algorithm::AesKeySearch.name(),
            backend: backend.name(),
            missing: String::new(),
        })
    }

    fn backend(self) -> Backend {
        match self {
            Kernel::Soft => Backend::Soft,
            #[cfg(target_arch = "x86_64")]
            Kernel::AesNi(_) => Backend::AesNi,
            #[cfg(target_arch = "x86_64")]
            Kernel::VaesAvx2(_) => Backend::VaesAvx2,
            #[cfg(target_arch = "x86_64")]
            Kernel::VaesAvx512(_) => Backend::VaesAvx512,
        }
    }

    /// Keys per batch.
    fn batch(self) -> usize {
        match self {
            Kernel::Soft => 8,
            #[cfg(target_arch = "x86_64")]
            Kernel::AesNi(_) => batch_aesni::BATCH,
            #[cfg(target_arch = "x86_64")]
            Kernel::VaesAvx2(_) => batch_vaes_avx2::BATCH,
            #[cfg(target_arch = "x86_64")]
            Kernel::VaesAvx512(_) => batch_vaes_avx512::BATCH,
        }
    }

    /// Pass mask of the first `self.batch()` keys of `keys`.
    fn filter(
        self,
        size: crate::aes::KeySize,
        plan: &Plan,
        keys: &KeyBatch,
        soft: &mut Aes,
    ) -> u64 {
        match self {
            Kernel::Soft => soft_filter(size, plan, keys, self.batch(), soft),
            #[cfg(target_arch = "x86_64")]
            Kernel::AesNi(k) => k.filter(size, plan, keys),
            #[cfg(target_arch = "x86_64")]
            Kernel::VaesAvx2(k) => k.filter(size, plan, keys),
            #[cfg(target_arch = "x86_64")]
            Kernel::VaesAvx512(k) => k.filter(size, plan, keys),
        }
    }
}

/// The portable filter: one key at a time through the constant-time
/// software AES (`soft` must be a soft-backend key; it is rekeyed).
fn soft_filter(
    size: crate::aes::KeySize,
    plan: &Plan,
    keys: &KeyBatch,
    n: usize,
    soft: &mut Aes,
) -> u64 {
    let mut pass = 0u64;
    let len = size.key_len();
    for i in 0..n {
        let key = keys.key(i, len);
        soft.rekey(&key[..len]).expect("valid key length");
        let mut bad = 0;
        let mut ok = true;
        for c in &plan.checks {
            let mut v = c.input;
            if c.forward {
                soft.encrypt_block(&mut v);
            } else {
                soft.decrypt_block(&mut v);
            }
            for (x, y) in v.iter_mut().zip(&c.xor) {
                *x ^= y;
            }
            let (good, b) = predicate::eval_check(c, &v, plan.utf8);
            bad += b;
            if !good || bad > plan.max_bad {
                ok = false;
                break;
            }
        }
        if ok {
            pass |= 1 << i;
        }
    }
    pass
}

/// The batch backends this (masked) CPU can run, best first (the
/// registry's [`Algorithm::AesKeySearch`] rows).
pub fn runnable_backends() -> Vec<Backend> {
    registry::runnable(
        Algorithm::AesKeySearch,
        crate::cpu::features().unwrap_or(crate::cpu::Features::NONE),
    )
}

/// The batch backend a search uses by default here.
pub fn default_backend() -> Backend {
    registry::default_backend(Algorithm::AesKeySearch).unwrap_or(Backend::Soft)
}

/// Keys per register of a batch backend (for display): 4 (zmm), 2 (ymm), 1.
pub fn keys_per_register(backend: Backend) -> usize {
    match backend {
        Backend::VaesAvx512 => 4,
        Backend::VaesAvx2 => 2,
        _ => 1,
    }
}

/// A flag that stops a running search (from another thread, a signal
/// handler, ...). Clones share the flag.
///
/// ```
/// use hwcrypt::crack::{CancelToken, SearchOptions};
/// let cancel = CancelToken::new();
/// let options = SearchOptions { cancel: Some(cancel.clone()), ..SearchOptions::default() };
/// cancel.cancel(); // from any thread: the search stops within a batch
/// assert!(options.cancel.unwrap().is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A new, unset token.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks the search to stop; it stops within a batch per thread.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How to run a search.
///
/// ```
/// use hwcrypt::crack::SearchOptions;
/// // Slice 3 of 16, two threads, every matching key.
/// let options = SearchOptions { threads: 2, shard: Some((3, 16)), find_all: true, ..SearchOptions::default() };
/// assert_eq!(options.backend, None); // the best batch backend this CPU runs
/// ```
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// Worker threads; 0 = one per available core.
    pub threads: usize,
    /// Batch backend; `None` = the best this CPU runs.
    pub backend: Option<Backend>,
    /// Search only shard `i` of `n` (0-based) of the key space.
    pub shard: Option<(u64, u64)>,
    /// Start at this key index (inside the shard), e.g. the position an
    /// interrupted search reported.
    pub start: Option<u64>,
    /// Ciphertext blocks the fast filter checks; `None` = chosen from the
    /// predicates (see [`Search::filter_blocks`]).
    pub filter_blocks: Option<Vec<usize>>,
    /// Keep going after the first hit and report every matching key.
    pub find_all: bool,
    /// With `find_all`: stop once this many keys were found (a predicate
    /// most keys pass would otherwise gather hits without bound); the
    /// outcome then has [`Outcome::hit_limit`] set and
    /// [`Outcome::position`] to resume from. `None` = no limit; `Some(0)`
    /// counts as 1.
    pub max_hits: Option<usize>,
    /// Stops the search when cancelled.
    pub cancel: Option<CancelToken>,
    /// How often the progress callback runs (default 100 ms).
    pub progress_interval: Option<Duration>,
}

/// A snapshot for the progress callback.
///
/// ```
/// use hwcrypt::crack::{Challenge, KeySpace, Mode, Padding, Predicate, Progress, Search, SearchOptions};
/// let mut key = [0u8; 16];
/// key[0] = 9;
/// let ciphertext = hwcrypt::modes::Cbc::new(hwcrypt::aes::Aes::new(&key)?, &[0; 16])?
///     .encrypt_padded(b"attack at dawn, then again at dusk");
/// let space = KeySpace::parse("0..=16, 0*15")?;
/// let challenge = Challenge::new(ciphertext, Mode::Cbc { iv: None }, Padding::Auto,
///     vec![Predicate::Contains(b"dusk".to_vec())])?;
/// let search = Search::new(&space, &challenge, SearchOptions::default())?;
/// let outcome = search.run(|p: &Progress| eprintln!("{}/{} keys, {} hits", p.searched, p.total, p.hits));
/// let hit = &outcome.hits[0];
/// assert_eq!((hit.key.as_slice(), hit.index), (&key[..], 9));
/// assert_eq!(hit.plaintext_offset, 16); // CBC without the IV: block 0 is not known
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    /// Keys tested so far.
    pub searched: u64,
    /// Keys in the searched range.
    pub total: u64,
    /// Time since the start.
    pub elapsed: Duration,
    /// Hits so far.
    pub hits: usize,
    /// A safe point to resume from: every key of `range.start..position`
    /// was tested, and every hit among them is in `found` (what a periodic
    /// checkpoint saves; [`Outcome::position`] is the same at the end).
    pub position: u64,
    /// The hits so far (all of them, in the order found).
    pub found: &'a [Hit],
}

impl core::fmt::Debug for Progress<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Progress")
            .field("searched", &self.searched)
            .field("total", &self.total)
            .field("elapsed", &self.elapsed)
            .field("hits", &self.hits)
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

/// A key that passed the full predicate.
///
/// ```
/// use hwcrypt::crack::{Challenge, KeySpace, Mode, Padding, Predicate, Progress, Search, SearchOptions};
/// let mut key = [0u8; 16];
/// key[0] = 9;
/// let ciphertext = hwcrypt::modes::Cbc::new(hwcrypt::aes::Aes::new(&key)?, &[0; 16])?
///     .encrypt_padded(b"attack at dawn, then again at dusk");
/// let space = KeySpace::parse("0..=16, 0*15")?;
/// let challenge = Challenge::new(ciphertext, Mode::Cbc { iv: None }, Padding::Auto,
///     vec![Predicate::Contains(b"dusk".to_vec())])?;
/// let search = Search::new(&space, &challenge, SearchOptions::default())?;
/// let outcome = search.run(|p: &Progress| eprintln!("{}/{} keys, {} hits", p.searched, p.total, p.hits));
/// let hit = &outcome.hits[0];
/// assert_eq!((hit.key.as_slice(), hit.index), (&key[..], 9));
/// assert_eq!(hit.plaintext_offset, 16); // CBC without the IV: block 0 is not known
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct Hit {
    /// The key.
    pub key: Vec<u8>,
    /// Its index in the key space.
    pub index: u64,
    /// The plaintext the predicates saw (PKCS#7 padding removed where it
    /// applies); it starts at byte `plaintext_offset` of the message.
    pub plaintext: Vec<u8>,
    /// 16 for CBC without IV (block 0 cannot be decrypted), else 0.
    pub plaintext_offset: usize,
}

impl Drop for Hit {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.key.zeroize();
        self.plaintext.zeroize();
    }
}

impl core::fmt::Debug for Hit {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hit")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// What a search did.
///
/// ```
/// use hwcrypt::crack::{Challenge, KeySpace, Mode, Padding, Predicate, Progress, Search, SearchOptions};
/// let mut key = [0u8; 16];
/// key[0] = 9;
/// let ciphertext = hwcrypt::modes::Cbc::new(hwcrypt::aes::Aes::new(&key)?, &[0; 16])?
///     .encrypt_padded(b"attack at dawn, then again at dusk");
/// let space = KeySpace::parse("0..=16, 0*15")?;
/// let challenge = Challenge::new(ciphertext, Mode::Cbc { iv: None }, Padding::Auto,
///     vec![Predicate::Contains(b"dusk".to_vec())])?;
/// let search = Search::new(&space, &challenge, SearchOptions::default())?;
/// let outcome = search.run(|p: &Progress| eprintln!("{}/{} keys, {} hits", p.searched, p.total, p.hits));
/// let hit = &outcome.hits[0];
/// assert_eq!((hit.key.as_slice(), hit.index), (&key[..], 9));
/// assert_eq!(hit.plaintext_offset, 16); // CBC without the IV: block 0 is not known
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Matching keys (at most one unless `find_all`), by key-space index.
    pub hits: Vec<Hit>,
    /// Keys tested.
    pub searched: u64,
    /// The index range searched (shard and start applied).
    pub range: Range<u64>,
    /// Every key of `range.start..position` was tested: restart here
    /// (with [`SearchOptions::start`]) to continue an interrupted search.
    pub position: u64,
    /// The whole range was tested.
    pub completed: bool,
    /// Stopped by the cancel token.
    pub cancelled: bool,
    /// Stopped because [`SearchOptions::max_hits`] keys were found before
    /// the range ended (with `find_all`).
    pub hit_limit: bool,
    /// Keys that passed the fast filter (each decrypted whole).
    pub filter_passes: u64,
    /// Wall time of the search proper.
    pub elapsed: Duration,
    /// The batch backend used.
    pub backend: Backend,
    /// Worker threads used.
    pub threads: usize,
    /// The ciphertext blocks the fast filter checked.
    pub filter_blocks: Vec<usize>,
}

/// A validated search, ready to run.
///
/// ```
/// use hwcrypt::crack::{Challenge, KeySpace, Mode, Padding, Predicate, Progress, Search, SearchOptions};
/// let mut key = [0u8; 16];
/// key[0] = 9;
/// let ciphertext = hwcrypt::modes::Cbc::new(hwcrypt::aes::Aes::new(&key)?, &[0; 16])?
///     .encrypt_padded(b"attack at dawn, then again at dusk");
/// let space = KeySpace::parse("0..=16, 0*15")?;
/// let challenge = Challenge::new(ciphertext, Mode::Cbc { iv: None }, Padding::Auto,
///     vec![Predicate::Contains(b"dusk".to_vec())])?;
/// let search = Search::new(&space, &challenge, SearchOptions::default())?;
/// let outcome = search.run(|p: &Progress| eprintln!("{}/{} keys, {} hits", p.searched, p.total, p.hits));
/// let hit = &outcome.hits[0];
/// assert_eq!((hit.key.as_slice(), hit.index), (&key[..], 9));
/// assert_eq!(hit.plaintext_offset, 16); // CBC without the IV: block 0 is not known
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Debug)]
pub struct Search<'a> {
    space: &'a KeySpace,
    challenge: &'a Challenge,
    plan: Plan,
    kernel: Kernel,
    range: Range<u64>,
    threads: usize,
    options: SearchOptions,
}

impl<'a> Search<'a> {
    /// Checks the options against the key space and challenge and plans the filter.
    pub fn new(
        space: &'a KeySpace,
        challenge: &'a Challenge,
        options: SearchOptions,
    ) -> Result<Search<'a>> {
        let kernel = Kernel::new(options.backend.unwrap_or_else(default_backend))?;
        let plan = challenge.plan(options.filter_blocks.as_deref())?;
        let mut range = match options.shard {
            Some((i, n)) => space.shard(i, n)?,
            None => 0..space.size(),
        };
        if let Some(start) = options.start {
            if start < range.start || start > range.end {
                return Err(Error::InvalidSearch(format!(
                    "start position {start} is outside the searched range {}..{}",
                    range.start, range.end
                )));
            }
            range.start = start;
        }
        let threads = match options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n.min(1024),
        };
        Ok(Search {
            space,
            challenge,
            plan,
            kernel,
            range,
            threads,
            options,
        })
    }

    /// The batch backend in use.
    pub fn backend(&self) -> Backend {
        self.kernel.backend()
    }

    /// The ciphertext blocks the fast filter checks, in the order it checks them.
    pub fn filter_blocks(&self) -> Vec<usize> {
        self.plan.checks.iter().map(|c| c.block).collect()
    }

    /// How each filter block is checked: `forward` (the known plaintext
    /// block, or the CTR counter, is encrypted: no decryption schedule) or
    /// `inverse` (the block is decrypted).
    pub fn filter_description(&self) -> String {
        if self.plan.checks.is_empty() {
            return "none (every key decrypts the whole message)".into();
        }
        self.plan
            .checks
            .iter()
            .map(|c| {
                let mut what = Vec::new();
                if c.known_mask != 0 {
                    what.push(format!("{} known bytes", c.known_mask.count_ones()));
                }
                if c.forward && c.known_mask == 0 && c.text_mask == 0 {
                    what.push("known block".into());
                }
                if c.text_mask != 0 {
                    what.push("text".into());
                }
                format!(
                    "block {} ({}, {})",
                    c.block,
                    if c.forward { "forward" } else { "inverse" },
                    what.join(" + ")
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The index range to search.
    pub fn range(&self) -> Range<u64> {
        self.range.clone()
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Confirms `key`, found at key-space index `index` (by an earlier run:
    /// a resume file), against the challenge as the search confirms a
    /// candidate: the hit, with its plaintext, or `None` if the plaintext
    /// the key gives is not accepted (or the key has the wrong length for
    /// the key space), so a stale or edited record is not reported.
    pub fn confirm(&self, key: &[u8], index: u64) -> Option<Hit> {
        if key.len() != self.space.key_size().key_len() {
            return None;
        }
        let aes = Aes::new(key).ok()?;
        let mut plain = Vec::with_capacity(self.challenge.ciphertext.len());
        self.challenge.decrypt(&aes, &mut plain);
        let hit = self.challenge.accepts(&plain).then(|| Hit {
            key: key.to_vec(),
            index,
            plaintext: self.challenge.visible(&plain).unwrap_or(&[]).to_vec(),
            plaintext_offset: self.challenge.first_byte,
        });
        use zeroize::Zeroize;
        plain.zeroize();
        hit
    }

    /// With `find_all`, whether `found` hits reach [`SearchOptions::max_hits`].
    fn hit_limit_reached(&self, found: usize) -> bool {
        self.options.find_all && self.options.max_hits.is_some_and(|m| found >= m.max(1))
    }

    /// Runs the search, calling `progress` on this thread about every
    /// `progress_interval` until it ends.
    pub fn run(self, mut progress: impl FnMut(&Progress<'_>)) -> Outcome {
        let start = Instant::now();
        let range = self.range.clone();
        let len = range.end - range.start;
        let batch = self.kernel.batch();
        let per_thread = len / self.threads as u64 / 16;
        let chunk = per_thread.clamp(batch as u64 * 64, 1 << 22);
        let chunk = chunk.div_ceil(batch as u64) * batch as u64;
        let next_chunk = AtomicU64::new(0);
        let unfinished = AtomicU64::new(u64::MAX);
        let searched = AtomicU64::new(0);
        let passes = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let hits: Mutex<Vec<Hit>> = Mutex::new(Vec::new());
        let cancel = self.options.cancel.clone().unwrap_or_default();
        let interval = self
            .options
            .progress_interval
            .unwrap_or(Duration::from_millis(100));
        // Per thread, the index in its chunk below which it has tested
        // every key (u64::MAX once it has no more chunks): every key below
        // the lowest of them and below the next chunk to hand out was
        // tested (see `safe_position`).
        let current: Vec<AtomicU64> = (0..self.threads)
            .map(|_| AtomicU64::new(range.start))
            .collect();
        let safe_position = || {
            let handed_out = next_chunk
                .load(Ordering::SeqCst)
                .saturating_mul(chunk)
                .saturating_add(range.start)
                .min(range.end);
            current
                .iter()
                .map(|c| c.load(Ordering::SeqCst))
                .fold(handed_out, u64::min)
        };
        let (tx, rx) = mpsc::channel::<()>();
        let worker = Worker {
            search: &self,
            chunk,
            current: &current,
            next_chunk: &next_chunk,
            unfinished: &unfinished,
            searched: &searched,
            passes: &passes,
            stop: &stop,
            cancel: &cancel,
            hits: &hits,
        };
        std::thread::scope(|s| {
            for t in 0..self.threads {
                let tx = tx.clone();
                let w = &worker;
                s.spawn(move || {
                    w.run(t);
                    let _ = tx.send(());
                });
            }
            drop(tx);
            let mut running = self.threads;
            while running > 0 {
                match rx.recv_timeout(interval) {
                    Ok(()) => running -= 1,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        // The position first, then the hits: a worker
                        // records its hits before it moves past a chunk.
                        let position = safe_position();
                        let found = hits.lock().unwrap_or_else(|e| e.into_inner());
                        progress(&Progress {
                            searched: searched.load(Ordering::Relaxed),
                            total: len,
                            elapsed: start.elapsed(),
                            hits: found.len(),
                            position,
                            found: &found,
                        });
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        let next = (next_chunk.load(Ordering::Relaxed).saturating_mul(chunk))
            .saturating_add(range.start)
            .min(range.end);
        let position = next.min(unfinished.load(Ordering::Relaxed));
        let mut hits = hits.into_inner().unwrap_or_else(|e| e.into_inner());
        // Threads that confirmed keys before they saw `stop` (a batch can
        // hold several): the lowest index, and without `find_all` only it.
        hits.sort_by_key(|h| h.index);
        if !self.options.find_all {
            hits.truncate(1);
        }
        let searched = searched.load(Ordering::Relaxed);
        let cancelled = cancel.is_cancelled() && position < range.end;
        let hit_limit = self.hit_limit_reached(hits.len()) && position < range.end;
        Outcome {
            completed: position == range.end,
            hit_limit,
            hits,
            searched,
            range,
            position,
            cancelled,
            filter_passes: passes.load(Ordering::Relaxed),
            elapsed: start.elapsed(),
            backend: self.backend(),
            threads: self.threads,
            filter_blocks: self.filter_blocks(),
        }
    }
}

/// The whole search in one call: [`Search::new`] then [`Search::run`].
/// `progress` runs on the calling thread about every
/// [`SearchOptions::progress_interval`]; a [`CancelToken`] in `options`
/// stops it from anywhere.
pub fn search(
    space: &KeySpace,
    challenge: &Challenge,
    options: SearchOptions,
    progress: impl FnMut(&Progress<'_>),
) -> Result<Outcome> {
    Ok(Search::new(space, challenge, options)?.run(progress))
}

/// What the worker threads share.
struct Worker<'s, 'a> {
    search: &'s Search<'a>,
    chunk: u64,
    /// Per thread: the index in its chunk up to which every key is tested
    /// (u64::MAX when it has no more chunks).
    current: &'s [AtomicU64],
    next_chunk: &'s AtomicU64,
    /// Lowest index a worker stopped at before finishing its chunk.
    unfinished: &'s AtomicU64,
    searched: &'s AtomicU64,
    passes: &'s AtomicU64,
    stop: &'s AtomicBool,
    cancel: &'s CancelToken,
    hits: &'s Mutex<Vec<Hit>>,
}

impl Worker<'_, '_> {
    fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.cancel.is_cancelled()
    }

    fn run(&self, thread: usize) {
        self.run_chunks(thread);
        // Stopped early or not, a halted thread's unfinished chunk is
        // accounted for by `unfinished`; a finished one has no chunk.
        if !self.halted() {
            self.current[thread].store(u64::MAX, Ordering::SeqCst);
        }
    }

    fn run_chunks(&self, thread: usize) {
        let s = self.search;
        let size = s.space.key_size();
        let key_len = size.key_len();
        // Confirmations rekey for every key that passes the filter and
        // decrypt a short message: AES-NI's key setup is the cheapest (the
        // VAES key also builds broadcast round keys).
        let verify_backend = match s.kernel.backend() {
            Backend::Soft => Backend::Soft,
            _ => Backend::AesNi,
        };
        let zero = [0u8; 32];
        // Soft if AES-NI cannot be had (it always can where a batch
        // backend runs; a worker that returned here would leave its share
        // of the range unsearched without a word).
        let Ok(mut aes) = Aes::with_backend(&zero[..key_len], verify_backend)
            .or_else(|_| Aes::with_backend(&zero[..key_len], Backend::Soft))
        else {
            return;
        };
        let Ok(mut soft) = Aes::with_backend(&zero[..key_len], Backend::Soft) else {
            return;
        };
        let mut plain = Vec::with_capacity(s.challenge.ciphertext.len());
        let mut keys = KeyBatch::new();
        let batch = s.kernel.batch();
        debug_assert!(batch <= MAX_BATCH);
        loop {
            if self.halted() {
                return;
            }
            let c = self.next_chunk.fetch_add(1, Ordering::Relaxed);
            let Some(a) = c
                .checked_mul(self.chunk)
                .and_then(|x| x.checked_add(s.range.start))
                .filter(|&a| a < s.range.end)
            else {
                return;
            };
            // Raises this thread's mark from its last chunk (finished, its
            // hits recorded) to this one.
            self.current[thread].store(a, Ordering::SeqCst);
            let b = a.saturating_add(self.chunk).min(s.range.end);
            let mut odo = Odometer::new(s.space, a);
            let mut i = a;
            // Keys tested but not yet added to `searched` (added every 256
            // batches, so the progress display moves on slow backends too).
            let mut pending = 0u64;
            let mut batches = 0u32;
            while i < b {
                // The hit limit lets the range's first batch run (one
                // thread holds it) before it stops, so a limited run always
                // moves the resume point past its start.
                let first = i == s.range.start && s.options.find_all && !self.cancel.is_cancelled();
                if self.halted() && !first {
                    self.unfinished.fetch_min(i, Ordering::Relaxed);
                    self.searched.fetch_add(pending, Ordering::Relaxed);
                    return;
                }
                let n = (b - i).min(batch as u64) as usize;
                odo.fill(&mut keys, n);
                let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                let mut pass = s.kernel.filter(size, &s.plan, &keys, &mut soft) & mask;
                while pass != 0 {
                    let j = pass.trailing_zeros() as usize;
                    pass &= pass - 1;
                    self.passes.fetch_add(1, Ordering::Relaxed);
                    let key = keys.key(j, key_len);
                    self.verify(&key[..key_len], i + j as u64, &mut aes, &mut plain);
                    // The hit limit stops at the next batch (every candidate
                    // of this one is confirmed first), so a stopped thread
                    // always moves its resume point on.
                    if self.cancel.is_cancelled()
                        || (self.stop.load(Ordering::Relaxed) && !s.options.find_all)
                    {
                        // A key was found (without `find_all`) or the
                        // search was cancelled: the batch's other
                        // candidates are left untested, so the resume
                        // point is the batch's start (a resumed run
                        // confirms this batch again).
                        // `searched` counts this batch's keys up to the
                        // one just confirmed (the filter saw them all; a
                        // search that stopped at its key has searched up
                        // to it).
                        self.unfinished.fetch_min(i, Ordering::Relaxed);
                        self.searched
                            .fetch_add(pending + j as u64 + 1, Ordering::Relaxed);
                        return;
                    }
                }
                i += n as u64;
                pending += n as u64;
                batches = batches.wrapping_add(1);
                if batches.is_multiple_of(256) {
                    self.searched.fetch_add(pending, Ordering::Relaxed);
                    pending = 0;
                    // Every key below `i` in this chunk is tested and its
                    // hits recorded: the resume point moves on inside long
                    // chunks too (slow backends).
                    self.current[thread].store(i, Ordering::SeqCst);
                }
            }
            self.searched.fetch_add(pending, Ordering::Relaxed);
        }
    }

    fn verify(&self, key: &[u8], index: u64, aes: &mut Aes, plain: &mut Vec<u8>) {
        let ch = self.search.challenge;
        aes.rekey(key).expect("valid key length");
        ch.decrypt(aes, plain);
        let accepted = ch.accepts(plain);
        if accepted {
            let visible = ch.visible(plain).unwrap_or(&[]).to_vec();
            let hit = Hit {
                key: key.to_vec(),
                index,
                plaintext: visible,
                plaintext_offset: ch.first_byte,
            };
            let found = {
                let mut hits = self.hits.lock().unwrap_or_else(|e| e.into_inner());
                hits.push(hit);
                hits.len()
            };
            if !self.search.options.find_all || self.search.hit_limit_reached(found) {
                self.stop.store(true, Ordering::Relaxed);
            }
            // Only the right key's plaintext is worth wiping; wrong keys
            // decrypt to noise, overwritten by the next confirmation.
            use zeroize::Zeroize;
            plain.zeroize();
        }
    }
}
