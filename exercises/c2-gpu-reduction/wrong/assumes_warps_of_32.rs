//! Assumes warps of 32: the tree stops at 32 and the shuffles start at 16, so on 8-wide subgroups lanes add themselves.
//!
//! A named wrong solution of C2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through.

use oxmera_kernel::kernel;

/// Block `b` writes to `partial[b]` the sum of its grid-stride elements.
#[kernel(block = [64, 128, 256])]
pub fn block_sums(x: &[f32], partial: &mut [f32], n: u32) {
    let s = shared::<f32>(256);
    let tid = thread_idx_x();
    let stride = grid_dim_x() * block_dim_x();
    let mut i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    while i < n {
        v += x[i];
        i += stride;
    }
    s[tid] = v;
    sync_threads();
    let mut half = block_dim_x() / 2;
    while half >= 32u32 {
        if tid < half {
            s[tid] += s[tid + half];
        }
        sync_threads();
        half /= 2;
    }
    if tid < 32 {
        let mut w = s[tid];
        let mut offset: u32 = 16;
        while offset > 0 {
            w += shfl_down_sync(0xffff_ffff, w, offset);
            offset /= 2;
        }
        if tid == 0 {
            partial[block_idx_x()] = w;
        }
    }
}
