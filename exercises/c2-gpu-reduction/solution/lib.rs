//! # C2 — GPU reduction (the author's solution)
//!
//! The kernel itself, written out. oxmera's own `reduce_sum`
//! (`crates/oxmera-kernel/src/library/kernels.rs`) has the same two
//! stages — a tree in shared memory down to one warp, then warp shuffles
//! — and the same rule: both stages are sized by `warp_size()`, never by
//! a literal 32.

use oxmera_kernel::kernel;

/// Block `b` writes to `partial[b]` the sum of the elements of `x` below
/// `n` that its threads reach by a grid-stride loop: thread `t` of the
/// grid adds `x[t]`, `x[t + T]`, `x[t + 2T]`, … with `T = grid_dim_x() *
/// block_dim_x()`. `block_dim_x()` is a power of two, at most 256, and
/// at least the warp width.
#[kernel(block = [64, 128, 256])]
pub fn block_sums(x: &[f32], partial: &mut [f32], n: u32) {
    let s = shared::<f32>(256);
    let tid = thread_idx_x();
    // Stage 0, no cooperation yet: each thread sums its own elements.
    let stride = grid_dim_x() * block_dim_x();
    let mut i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    while i < n {
        v += x[i];
        i += stride;
    }
    s[tid] = v;
    // Stage 1: a tree in shared memory, halving until one warp's worth of
    // sums is left. Every thread reaches every barrier; only the additions
    // are guarded.
    sync_threads();
    let mut half = block_dim_x() / 2;
    while half >= warp_size() {
        if tid < half {
            s[tid] += s[tid + half];
        }
        sync_threads();
        half /= 2;
    }
    // Stage 2: the first warp finishes with shuffles, no barrier needed
    // inside one warp. `tid < warp_size()` is exactly warp 0 on every
    // target, so the whole warp takes part in each shuffle.
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
