//! Off-by-one guard: `i <= n` lets the thread of element n touch one past the end.
//!
//! A named wrong solution of B1, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `<=` for `<` in the tail guard.
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;

/// `y[i] = a * x[i] + y[i]` for every `i < n`, one element per thread.
#[kernel(block = [32, 64, 128, 256])]
pub fn saxpy(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    // This thread's element: whole blocks before this one, then its place
    // in this block.
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    // The tail guard: the grid is whole blocks, so the last block's last
    // threads own no element.
    if i <= n {
        y[i] = a * x[i] + y[i];
    }
}

/// The launch for `saxpy` over `n` elements at `block` threads per block,
/// or `None` when `n == 0`.
pub fn launch_for(n: u32, block: u32) -> Option<LaunchConfig> {
    if n == 0 {
        // Nothing to do: a zero-block grid is no launch.
        return None;
    }
    // Round up without overflow: `(n + block - 1) / block` wraps for n
    // near u32::MAX.
    Some(LaunchConfig::linear(n.div_ceil(block), block))
}
