//! Opt-in benchmarks for hwcrypt; see `benches/`.
