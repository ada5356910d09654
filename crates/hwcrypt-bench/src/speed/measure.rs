//! Timing: workloads, the core-clock estimate, warm-up, repetitions and
//! threads.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Something timed by counting how many operations fit in a window: one
/// operation is one message (throughput rows) or one key setup.
pub trait Workload: Send {
    /// Performs `count` operations. Every output is passed through
    /// [`black_box`] so none of the work can be optimised away.
    fn run(&mut self, count: u64);
}

/// A throughput workload: a buffer of one message and a function that
/// processes it in place, given the message number (for fresh IVs/nonces).
pub(crate) struct Messages<S, F> {
    state: S,
    buf: Vec<u8>,
    len: usize,
    n: u64,
    f: F,
}

impl<S, F> Workload for Messages<S, F>
where
    S: Send,
    F: FnMut(&mut S, &mut [u8], usize, u64) + Send,
{
    fn run(&mut self, count: u64) {
        for _ in 0..count {
            self.n = self.n.wrapping_add(1);
            (self.f)(
                &mut self.state,
                black_box(&mut self.buf[..]),
                self.len,
                self.n,
            );
        }
        black_box(&self.buf);
    }
}

/// A message workload of `len` bytes (the buffer has `slack` bytes more,
/// for APIs that want room for a block of output beyond the input).
pub(crate) fn messages<S, F>(state: S, len: usize, slack: usize, f: F) -> Box<dyn Workload>
where
    S: Send + 'static,
    F: FnMut(&mut S, &mut [u8], usize, u64) + Send + 'static,
{
    let buf = (0..len + slack).map(|i| (i * 31 + 7) as u8).collect();
    Box::new(Messages {
        state,
        buf,
        len,
        n: 0,
        f,
    })
}

/// Distinct keys a key-setup workload cycles through.
pub const KEY_RING: usize = 16;

/// A key-setup workload: builds a key from `len` bytes that differ from
/// the previous call's (so nothing can be hoisted), and drops it (a wipe
/// included). The keys are made up front and taken in turn: changing a
/// byte of one key before each call, as this did before, made every
/// implementation's first wide load of the key wait for that byte store
/// (a load wider than the store it overlaps is not forwarded), about 10
/// cycles that a key written by a KDF's whole-word stores does not cost.
pub(crate) struct Keys<F> {
    keys: [[u8; 64]; KEY_RING],
    len: usize,
    f: F,
}

impl<F: FnMut(&[u8]) + Send> Workload for Keys<F> {
    fn run(&mut self, count: u64) {
        for i in 0..count {
            let key = &self.keys[(i % KEY_RING as u64) as usize];
            (self.f)(black_box(&key[..self.len]));
        }
    }
}

/// A key-setup workload for keys of `len` bytes.
pub(crate) fn keys<F: FnMut(&[u8]) + Send + 'static>(len: usize, f: F) -> Box<dyn Workload> {
    Box::new(Keys {
        keys: key_ring(),
        len,
        f,
    })
}

/// The keys a key-setup workload takes in turn: key `j` is `bench_key()`
/// with byte `j % 8` raised by `1 + j / 8` (only the first 8 bytes differ,
/// so XTS keys keep different halves).
pub fn key_ring() -> [[u8; 64]; KEY_RING] {
    core::array::from_fn(|j| {
        let mut k = bench_key();
        k[j % 8] = k[j % 8].wrapping_add(1 + (j / 8) as u8);
        k
    })
}

/// The key every workload starts from; its halves differ (XTS needs that).
pub(crate) fn bench_key() -> [u8; 64] {
    core::array::from_fn(|i| (i * 7 + 1) as u8)
}

/// This thread's on-CPU time (`CLOCK_THREAD_CPUTIME_ID`), if the system
/// has it. (`/proc/thread-self/schedstat` is no substitute: for a running
/// thread it lags by up to a scheduler tick, far too coarse for short runs.)
fn thread_cpu() -> Option<Duration> {
    cpu_time::ThreadTime::try_now()
        .ok()
        .map(|t| t.as_duration())
}

/// How the core clock was found.
pub const CLOCK_METHOD: &str = "measured: a chain of dependent 64-bit multiplies (3 cycles each on \
     x86-64 cores since Nehalem and Zen) timed against the wall clock";

/// Estimates the core clock in Hz from nine short chains of dependent
/// 64-bit multiplies (latency 3 cycles), timed by the wall clock: the
/// fastest of them, since a chain can only be slowed down (by preemption on
/// a shared machine), never sped up. This is the clock the code actually
/// runs at (turbo included), not the TSC rate.
pub fn core_clock_hz() -> f64 {
    const ITERS: u64 = 1 << 20;
    let mut rates = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        // An odd seed the compiler cannot know (its address never escapes,
        // so it stays in a register), squared over and over: x^(2^n) has no
        // closed form the compiler could use, and odd stays odd (never 0).
        let mut x = u64::from(start.elapsed().subsec_nanos()) | 1;
        for _ in 0..ITERS {
            x = x.wrapping_mul(x);
        }
        let secs = start.elapsed().as_secs_f64();
        black_box(x);
        rates.push(3.0 * ITERS as f64 / secs);
    }
    rates.into_iter().fold(0.0, f64::max)
}

/// Timing settings for one cell.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Timed time per implementation and cell, over all repetitions.
    pub time: Duration,
    /// Repetitions; the median is reported.
    pub reps: usize,
    /// Threads, each with its own key and buffer.
    pub threads: usize,
}

impl Timing {
    fn window(&self) -> Duration {
        self.time / self.reps.max(1) as u32
    }
}

/// One workload prepared for timing: one instance per thread, and how many
/// operations one timer check covers.
pub(crate) struct Prepared {
    pub(crate) per_thread: Vec<Box<dyn Workload>>,
    batch: u64,
}

impl Prepared {
    /// Warms the workloads up (caches, branch predictors, clocks) for about
    /// `warm` and sizes the batch so one batch takes ~20 us.
    pub(crate) fn new(mut per_thread: Vec<Box<dyn Workload>>, warm: Duration) -> Prepared {
        let w = &mut per_thread[0];
        let start = Instant::now();
        let mut batch = 1u64;
        let mut rate = 0.0;
        loop {
            let t = Instant::now();
            w.run(batch);
            let secs = t.elapsed().as_secs_f64();
            if secs > 0.0 {
                rate = batch as f64 / secs;
            }
            if start.elapsed() >= warm {
                break;
            }
            if secs < 2e-3 {
                batch *= 2;
            }
        }
        for w in per_thread.iter_mut().skip(1) {
            w.run(batch);
        }
        let batch = ((rate * 20e-6) as u64).clamp(1, 1 << 24);
        Prepared { per_thread, batch }
    }
}

/// One timed run: operations per second (all threads together), and whether
/// it was timed by on-CPU time because the thread was preempted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub(crate) ops_per_sec: f64,
    pub(crate) preempted: bool,
}

fn timed_loop(w: &mut dyn Workload, batch: u64, window: Duration) -> (u64, Duration) {
    let start = Instant::now();
    let mut ops = 0u64;
    loop {
        w.run(batch);
        ops += batch;
        let elapsed = start.elapsed();
        if elapsed >= window {
            return (ops, elapsed);
        }
    }
}

/// Times one repetition of `p` with `threads` threads (at most as many as
/// it has workloads). Single-threaded, a run during which the thread was
/// preempted (on-CPU time under 90% of the wall time) is timed by its
/// on-CPU time: the machine may be shared.
pub(crate) fn sample(p: &mut Prepared, timing: &Timing, threads: usize) -> Sample {
    let window = timing.window();
    let batch = p.batch;
    if threads <= 1 {
        let cpu0 = thread_cpu();
        let (ops, wall) = timed_loop(p.per_thread[0].as_mut(), batch, window);
        let cpu = match (cpu0, thread_cpu()) {
            (Some(a), Some(b)) => b.checked_sub(a),
            _ => None,
        };
        return match cpu {
            Some(c) if c.as_secs_f64() < 0.9 * wall.as_secs_f64() && !c.is_zero() => Sample {
                ops_per_sec: ops as f64 / c.as_secs_f64(),
                preempted: true,
            },
            _ => Sample {
                ops_per_sec: ops as f64 / wall.as_secs_f64(),
                preempted: false,
            },
        };
    }
    let barrier = Barrier::new(threads + 1);
    let mut total_ops = 0u64;
    let mut wall = Duration::ZERO;
    std::thread::scope(|s| {
        let handles: Vec<_> = p
            .per_thread
            .iter_mut()
            .take(threads)
            .map(|w| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    timed_loop(w.as_mut(), batch, window)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for h in handles {
            // A panicking workload is a bug in the harness; pass it on.
            let (ops, _) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            total_ops += ops;
        }
        wall = start.elapsed();
    });
    Sample {
        ops_per_sec: total_ops as f64 / wall.as_secs_f64(),
        preempted: false,
    }
}

/// Median, minimum and maximum of `xs` (not empty).
pub(crate) fn stats(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_median() {
        assert_eq!(stats(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(stats(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }

    #[test]
    fn clock_is_plausible() {
        let hz = core_clock_hz();
        assert!(hz > 2e8 && hz < 1e10, "{hz}");
    }
}
