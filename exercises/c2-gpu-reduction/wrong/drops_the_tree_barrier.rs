//! Drops the tree's barrier: a thread reads its partner's slot before the partner has added into it.
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
    while half >= warp_size() {
        if tid < half {
            s[tid] += s[tid + half];
        }
        half /= 2;
    }
    if tid < warp_size() {
        let mut w = s[tid];
        let mut offset = warp_size() / 2;
        while offset > 0 {
            w += shfl_down_sync(0xffff_ffff, w, offset);
            offset /= 2;
        }
        if tid == 0 {
            partial[block_idx_x()] = w;
        }
    }
}
