//! # C1 — GPU elementwise (the author's solution)
//!
//! The kernel itself, written out: a grid-stride loop. oxmera's own
//! elementwise kernels (`crates/oxmera-kernel/src/library/kernels.rs`)
//! give each thread one element; this one lets a bounded grid cover any
//! `n`, which is what a real device's grid limit asks for.

use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;

/// `y[i] = max(a * x[i] + y[i], 0)` for every `i < n`, in place on `y`;
/// elements of `y` at `n` and beyond are left as they are.
#[kernel(block = [64, 128, 256])]
pub fn axpy_relu(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    // Every thread of the grid, counted once: the distance between two
    // elements one thread does.
    let stride = grid_dim_x() * block_dim_x();
    let mut i = block_idx_x() * block_dim_x() + thread_idx_x();
    // The loop's test is the tail guard too: a thread whose first element
    // is past `n` does nothing.
    while i < n {
        y[i] = (a * x[i] + y[i]).max(0.0);
        i += stride;
    }
}

/// The launch for `axpy_relu` over `n` elements at `block` threads a
/// block, with at most `max_blocks` blocks, or `None` when `n == 0`.
pub fn launch_for(n: u32, block: u32, max_blocks: u32) -> Option<LaunchConfig> {
    if n == 0 {
        // Nothing to do: a zero-block grid is no launch.
        return None;
    }
    // Enough blocks for one element a thread, but never more than the
    // device allows: the loop covers the rest. `div_ceil` cannot wrap.
    Some(LaunchConfig::linear(
        n.div_ceil(block).min(max_blocks),
        block,
    ))
}
