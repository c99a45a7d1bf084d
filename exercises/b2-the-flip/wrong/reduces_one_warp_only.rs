//! Starts the tree at `warp_size() / 2`: no hang and no race, but it sums the first warp only.
//!
//! A named wrong solution of B2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with the first stride taken from the warp, not the
//! block.

use oxmera_kernel::kernel;

/// Block `b` writes the sum of its slice of `x` to `out[b]`; elements at
/// `n` and past it count as 0. `block_dim_x()` is a power of two, at most
/// 1024.
#[kernel(block = [32, 64, 128, 256])]
pub fn block_sum(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
    // Every thread of the block reaches every barrier: only the additions
    // and the final store are conditional.
    sync_threads();
    let mut stride = warp_size() / 2;
    while stride > 0 {
        if tid < stride {
            s[tid] += s[tid + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if tid == 0 {
        out[block_idx_x()] = s[0];
    }
}
