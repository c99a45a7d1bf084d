//! Narrows the launch space to `block = [32]` instead of moving the barriers: still a hang at 64.
//!
//! A named wrong solution of B2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! skeleton's kernel, unchanged, declared at the one block size where it is
//! right.

use oxmera_kernel::kernel;

/// Block `b` writes the sum of its slice of `x`,
/// `x[b * block_dim_x() .. (b + 1) * block_dim_x()]`, to `out[b]`; elements
/// at `n` and past it count as 0. `block_dim_x()` is a power of two, at
/// most 1024 (the length of the shared array).
///
/// Declared at 32 threads only, the one size where the analysis finds
/// nothing: the gate is quiet, and the kernel still hangs at 64.
#[kernel(block = [32])]
pub fn block_sum(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
    let w = warp_id();
    if w == 0 {
        sync_threads();
        let mut stride = block_dim_x() / 2;
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
}
