//! Finishes the tree in shared memory under tid < warp_size(), barriers and all: the other warps never reach them.
//!
//! A named wrong solution of C2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through.

use oxmera_kernel::kernel;

/// Block `b` writes to `partial[b]` the sum of its grid-stride elements.
///
/// Declared with no launch space: the compile-time gate would refuse it
/// (OXK001 at every block), so the spec's analysis is what shows it.
#[kernel]
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
        sync_threads();
        half /= 2;
    }
    if tid < warp_size() {
        let mut h = warp_size() / 2;
        while h > 0 {
            if tid < h {
                s[tid] += s[tid + h];
            }
            sync_threads();
            h /= 2;
        }
        if tid == 0 {
            partial[block_idx_x()] = s[0];
        }
    }
}
