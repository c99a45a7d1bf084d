//! # C1 — GPU elementwise
//!
//! The kernel of B1, on a real device. A GPU's grid is not endless: wgpu
//! allows 65 535 blocks a dimension, so "one thread per element" stops
//! at 16.7 million elements of 256-thread blocks. The answer is the
//! *grid-stride loop*: launch at most `max_blocks` blocks, and let each
//! thread go on to the element one whole grid further, until it passes
//! `n`. The spec runs this file three ways — the analysis, the simulator
//! and your GPU through wgpu. Read the README first; the spec is
//! `tests/spec.rs`.

use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;

/// `y[i] = max(a * x[i] + y[i], 0)` for every `i < n`, in place on `y`
/// (an axpy, then a ReLU); elements of `y` at `n` and beyond are left as
/// they are.
///
/// The grid may be smaller than `n` threads: thread `t` of the grid (its
/// block's offset plus its place in the block) does elements `t`,
/// `t + T`, `t + 2T`, … below `n`, where `T = grid_dim_x() *
/// block_dim_x()` is the number of threads in the whole grid. Every
/// element is done exactly once.
#[kernel(block = [64, 128, 256])]
pub fn axpy_relu(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    // TODO(C1): a loop over this thread's elements. (The kernel language
    // has no `todo!()`: an empty body is a kernel that does nothing.)
}

/// The launch for `axpy_relu` over `n` elements at `block` threads a
/// block: enough blocks for one element a thread, but never more than
/// `max_blocks` (the device's limit, or a choice). `None` when `n == 0`:
/// a grid of zero blocks is no launch at all.
///
/// `launch_for(1000, 256, 1024)` is 4 blocks; `launch_for(10_000_000,
/// 256, 1024)` is 1024 blocks, each thread doing about 38 elements.
/// `block` and `max_blocks` are at least 1.
pub fn launch_for(n: u32, block: u32, max_blocks: u32) -> Option<LaunchConfig> {
    // TODO(C1): round up without overflow, then cap.
    todo!("C1: launch_for({n}, {block}, {max_blocks})")
}
