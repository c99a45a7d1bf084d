//! Tests the bound after the first element (a do-while): a thread past n writes out of bounds.
//!
//! A named wrong solution of C1, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through.

use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;

/// `y[i] = max(a * x[i] + y[i], 0)` for every `i < n`.
#[kernel(block = [64, 128, 256])]
pub fn axpy_relu(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    let stride = grid_dim_x() * block_dim_x();
    let mut i = block_idx_x() * block_dim_x() + thread_idx_x();
    loop {
        y[i] = (a * x[i] + y[i]).max(0.0);
        i += stride;
        if i >= n {
            break;
        }
    }
}

/// The launch: one element a thread, capped at `max_blocks`.
pub fn launch_for(n: u32, block: u32, max_blocks: u32) -> Option<LaunchConfig> {
    if n == 0 {
        return None;
    }
    Some(LaunchConfig::linear(
        n.div_ceil(block).min(max_blocks),
        block,
    ))
}
