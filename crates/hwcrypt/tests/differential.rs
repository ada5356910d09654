//! Differential tests (being written).
fn main() {}
