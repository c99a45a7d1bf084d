//! # D2 — run and measure
//!
//! Your kernel on an NVIDIA GPU, and a number for how fast it is that you
//! could defend. Three parts: a kernel (`scale`, C1's grid-stride loop
//! with a simpler body), what it moves through memory (`bytes_moved`),
//! and which of many timings stands for it (`typical`), plus the unit
//! (`gb_per_s`). The spec times your kernel beside a plain copy of the
//! same bytes on the same GPU. Read the README first; the spec is
//! `tests/spec.rs`.

use oxmera_kernel::kernel;

/// `y[i] = a * x[i]` for every `i < n`, by a grid-stride loop (C1): the
/// spec launches at most 1024 blocks of 256 threads.
#[kernel(block = [256])]
pub fn scale(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    // TODO(D2): C1's loop, with `y[i] = a * x[i]`. (The kernel language
    // has no `todo!()`: an empty body is a kernel that does nothing.)
}

/// The bytes `scale` moves through the GPU's memory for `n` elements.
pub fn bytes_moved(n: u64) -> u64 {
    // TODO(D2): what does one element cost the memory?
    todo!("D2: bytes_moved({n})")
}

/// The time that stands for a series of runs: of the runs after the first
/// `warmup`, the one a typical run takes, in the same unit as `times`;
/// `None` when no run is left. `typical(&[300.0, 2.1, 1.9, 2.0, 40.0,
/// 2.0, 2.2], 1)` is `Some(2.05)`.
pub fn typical(times: &[f64], warmup: usize) -> Option<f64> {
    // TODO(D2): leave out the warm-up; then which statistic?
    todo!("D2: typical({} runs, warm-up {warmup})", times.len())
}

/// Bandwidth in GB/s (10⁹ bytes a second) of `bytes` moved in `seconds`.
pub fn gb_per_s(bytes: u64, seconds: f64) -> f64 {
    // TODO(D2)
    todo!("D2: gb_per_s({bytes}, {seconds})")
}
