//! Instruction-shape microbenchmark behind the Zen 3 XTS notes in
//! docs/performance.md: `xts-shapes SHAPE [ITERATIONS]` runs one
//! straight-line `asm!` body ITERATIONS times (default 10 million) and
//! prints nothing; read the cost per iteration from `perf stat -e
//! cycles:u` divided by ITERATIONS. No data is read or written: registers
//! only, so the figures are the shapes' port use and dependency chains.
//!
//! Every shape has 8 independent `vaesenc` ymm chains of 10 rounds (80
//! instructions: 40 cycles at two per cycle); SHAPE adds to them:
//!
//! * `aes`: nothing;
//! * `shifts`: 16 byte shifts (`vpslldq`/`vpsrldq`), independent;
//! * `xors`: 24 independent `vpxor`;
//! * `clmul`: 8 independent `vpclmulqdq` ymm;
//! * `clmul-alone`: the 8 `vpclmulqdq` without the AES chains;
//! * `whiten`: the XTS whitening, 8 `vpxor` with four tweak registers
//!   before round 1 and 8 after round 10;
//! * `update-mid`: `whiten` plus eight x^16 tweak updates (`vpsrldq`,
//!   `vpclmulqdq`, `vpslldq`, `vpxor` each, on four registers twice) all
//!   after round 5, as the `vaes-avx2` kernel does;
//! * `update-spread`: the same updates one per round (rounds 1-8);
//! * `update-xor`: `update-mid` with a `vpxor` in place of each
//!   `vpclmulqdq` (the cost of the carry-less multiply itself).
//!
//! Needs VAES and VPCLMULQDQ (exits 2 without them).
#![allow(unsafe_code)]

use std::arch::asm;

/// One round of the 8 chains, key in ymm15.
macro_rules! aes8 {
    () => {
        "vaesenc ymm0, ymm0, ymm15\nvaesenc ymm1, ymm1, ymm15\nvaesenc ymm2, ymm2, ymm15\nvaesenc ymm3, ymm3, ymm15\nvaesenc ymm4, ymm4, ymm15\nvaesenc ymm5, ymm5, ymm15\nvaesenc ymm6, ymm6, ymm15\nvaesenc ymm7, ymm7, ymm15\n"
    };
}

/// Five rounds.
macro_rules! aes8x5 {
    () => {
        concat!(aes8!(), aes8!(), aes8!(), aes8!(), aes8!())
    };
}

/// Fresh states: the 8 chains start from ymm13 (the "data", never
/// written), so no chain carries from one iteration to the next and
/// iterations may overlap, as the kernels' do.
macro_rules! fresh {
    () => {
        "vmovdqa ymm0, ymm13\nvmovdqa ymm1, ymm13\nvmovdqa ymm2, ymm13\nvmovdqa ymm3, ymm13\nvmovdqa ymm4, ymm13\nvmovdqa ymm5, ymm13\nvmovdqa ymm6, ymm13\nvmovdqa ymm7, ymm13\n"
    };
}

/// The first whitening: fresh states (from ymm13) XORed with the four
/// tweak registers.
macro_rules! whiten_in {
    () => {
        "vpxor ymm0, ymm13, ymm8\nvpxor ymm1, ymm13, ymm9\nvpxor ymm2, ymm13, ymm10\nvpxor ymm3, ymm13, ymm11\nvpxor ymm4, ymm13, ymm8\nvpxor ymm5, ymm13, ymm9\nvpxor ymm6, ymm13, ymm10\nvpxor ymm7, ymm13, ymm11\n"
    };
}

/// The whitening XOR of the 8 states with the four tweak registers.
macro_rules! whiten {
    () => {
        "vpxor ymm0, ymm0, ymm8\nvpxor ymm1, ymm1, ymm9\nvpxor ymm2, ymm2, ymm10\nvpxor ymm3, ymm3, ymm11\nvpxor ymm4, ymm4, ymm8\nvpxor ymm5, ymm5, ymm9\nvpxor ymm6, ymm6, ymm10\nvpxor ymm7, ymm7, ymm11\n"
    };
}

/// Tweak register `$t` times x^16, temporary ymm12: the two bytes
/// shifted out reduced by the instruction `$reduce` (`clmul_reduce!()`,
/// as the kernel does, or a `vpxor` in its place, to time the rest).
macro_rules! upd {
    ($reduce:expr, $t:literal) => {
        concat!(
            "vpsrldq ymm12, ymm",
            $t,
            ", 14\n",
            $reduce,
            "\n",
            "vpslldq ymm",
            $t,
            ", ymm",
            $t,
            ", 2\n",
            "vpxor ymm",
            $t,
            ", ymm",
            $t,
            ", ymm12\n"
        )
    };
}

/// The reduction by `vpclmulqdq` with the polynomial in ymm14.
macro_rules! clmul_reduce {
    () => {
        "vpclmulqdq ymm12, ymm12, ymm14, 0"
    };
}

/// Eight updates after round 5, between the two halves of the rounds.
macro_rules! update_mid {
    ($reduce:expr) => {
        concat!(
            whiten_in!(),
            aes8x5!(),
            upd!($reduce, "8"),
            upd!($reduce, "9"),
            upd!($reduce, "10"),
            upd!($reduce, "11"),
            upd!($reduce, "8"),
            upd!($reduce, "9"),
            upd!($reduce, "10"),
            upd!($reduce, "11"),
            aes8x5!(),
            whiten!()
        )
    };
}

/// Four independent byte shifts each way.
macro_rules! shifts8 {
    () => {
        "vpslldq ymm9, ymm8, 2\nvpslldq ymm11, ymm10, 2\nvpslldq ymm12, ymm10, 2\nvpslldq ymm12, ymm8, 2\nvpsrldq ymm9, ymm8, 2\nvpsrldq ymm11, ymm10, 2\nvpsrldq ymm12, ymm10, 2\nvpsrldq ymm12, ymm8, 2\n"
    };
}

/// Four independent `vpxor`.
macro_rules! xors4 {
    () => {
        "vpxor ymm9, ymm8, ymm10\nvpxor ymm11, ymm8, ymm10\nvpxor ymm12, ymm10, ymm8\nvpxor ymm12, ymm8, ymm10\n"
    };
}

/// Four independent `vpclmulqdq` ymm.
macro_rules! clmul4 {
    () => {
        "vpclmulqdq ymm9, ymm10, ymm8, 0\nvpclmulqdq ymm11, ymm10, ymm8, 0\nvpclmulqdq ymm12, ymm10, ymm8, 0\nvpclmulqdq ymm12, ymm10, ymm8, 0\n"
    };
}

/// Runs `$body` `$n` times; every vector register it may touch is clobbered.
macro_rules! run {
    ($n:expr, $body:expr) => {
        for _ in 0..$n {
            // SAFETY: registers only (no memory, no stack); VAES and
            // VPCLMULQDQ were detected in `main`; every register written
            // is declared clobbered.
            unsafe {
                asm!(
                    $body,
                    out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                    out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                    out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                    out("ymm12") _,
                    options(nomem, nostack, preserves_flags)
                )
            }
        }
    };
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(shape) = args.first() else {
        eprintln!(
            "usage: xts-shapes aes|shifts|xors|clmul|clmul-alone|whiten|update-mid|update-spread|update-xor [ITERATIONS]"
        );
        std::process::exit(2);
    };
    let n: u64 = args
        .get(1)
        .map_or(10_000_000, |s| s.parse().expect("ITERATIONS"));
    if !(is_x86_feature_detected!("vaes") && is_x86_feature_detected!("vpclmulqdq")) {
        eprintln!("xts-shapes: needs VAES and VPCLMULQDQ");
        std::process::exit(2);
    }
    match shape.as_str() {
        "aes" => run!(n, concat!(fresh!(), aes8x5!(), aes8x5!())),
        "shifts" => run!(
            n,
            concat!(fresh!(), aes8x5!(), aes8x5!(), shifts8!(), shifts8!())
        ),
        "xors" => run!(
            n,
            concat!(
                fresh!(),
                aes8x5!(),
                aes8x5!(),
                xors4!(),
                xors4!(),
                xors4!(),
                xors4!(),
                xors4!(),
                xors4!()
            )
        ),
        "clmul" => run!(
            n,
            concat!(fresh!(), aes8x5!(), aes8x5!(), clmul4!(), clmul4!())
        ),
        "clmul-alone" => run!(n, concat!(clmul4!(), clmul4!())),
        "whiten" => run!(n, concat!(whiten_in!(), aes8x5!(), aes8x5!(), whiten!())),
        "update-mid" => run!(n, update_mid!(clmul_reduce!())),
        "update-spread" => run!(
            n,
            concat!(
                whiten_in!(),
                aes8!(),
                upd!(clmul_reduce!(), "8"),
                aes8!(),
                upd!(clmul_reduce!(), "9"),
                aes8!(),
                upd!(clmul_reduce!(), "10"),
                aes8!(),
                upd!(clmul_reduce!(), "11"),
                aes8!(),
                upd!(clmul_reduce!(), "8"),
                aes8!(),
                upd!(clmul_reduce!(), "9"),
                aes8!(),
                upd!(clmul_reduce!(), "10"),
                aes8!(),
                upd!(clmul_reduce!(), "11"),
                aes8!(),
                aes8!(),
                whiten!()
            )
        ),
        "update-xor" => run!(n, update_mid!("vpxor ymm12, ymm12, ymm14")),
        other => {
            eprintln!("xts-shapes: unknown shape {other}");
            std::process::exit(2);
        }
    }
}
