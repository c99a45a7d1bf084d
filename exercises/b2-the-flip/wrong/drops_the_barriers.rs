//! Deletes every `sync_threads()`: threads read slots that others have not written yet.
//!
//! A named wrong solution of B2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution without its barriers.

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
    // No barriers, so no barrier can be missed.
    let mut stride = block_dim_x() / 2;
    while stride > 0 {
        if tid < stride {
            s[tid] += s[tid + stride];
        }
        stride /= 2;
    }
    if tid == 0 {
        out[block_idx_x()] = s[0];
    }
}
