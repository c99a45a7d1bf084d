//! # B1 — first kernel
//!
//! A GPU runs one function, the *kernel*, on many threads at once. The
//! threads come in blocks of `block_dim_x()` threads, and the launch asks
//! for a grid of `grid_dim_x()` blocks. Each thread works out which
//! element is its own from where it sits in the grid, and does that one
//! element. Here you write `saxpy` (`y = a·x + y`, "single-precision a x
//! plus y") as a kernel, and the host-side rule that picks its grid.
//! Read the README first; the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;

/// `y[i] = a * x[i] + y[i]` for every `i < n`, one element per thread.
///
/// Thread `thread_idx_x()` of block `block_idx_x()` owns element
/// `block_idx_x() * block_dim_x() + thread_idx_x()`. The grid is whole
/// blocks, so when `n` is not a multiple of the block the last threads own
/// no element: they must not touch `x` or `y` at all. Elements of `y` at
/// `n` and beyond are left as they are.
///
/// `#[kernel]` turns this function into `saxpy() -> &'static Kernel`, the
/// kernel's IR; the spec runs that in the simulator. `block = [...]` is the
/// launch space: the block sizes the kernel is meant to run at.
#[kernel(block = [32, 64, 128, 256])]
pub fn saxpy(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    // TODO(B1): find this thread's element, and touch it only if it is
    // one of the n. (The kernel language has no `todo!()`: an empty body
    // is a kernel that does nothing.)
}

/// The launch for `saxpy` over `n` elements at `block` threads per block:
/// the fewest whole blocks that give every element a thread, or `None`
/// when there is nothing to do (`n == 0`: a grid of zero blocks is no
/// launch at all, and `LaunchConfig::validate` rejects it).
///
/// `launch_for(1000, 256)` is a grid of 4 blocks (1024 threads, 24 of them
/// idle): `LaunchConfig::linear(4, 256)`. `block` is at least 1.
pub fn launch_for(n: u32, block: u32) -> Option<LaunchConfig> {
    // TODO(B1): round up, for every n a u32 can hold.
    todo!("B1: launch_for({n}, {block})")
}
